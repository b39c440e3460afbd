/**
 * V8's young generation (two semi-spaces) grows towards 64 MB each under load and while modules
 * load, and keeps the pages: most of a fresh reader's RSS past its code, and most of what a waiting
 * long-poll costs at 10,000 followers (docs/benchmarks.md, "Memory of a reader"). Its size is a V8
 * flag, fixed when the process starts, so a process that wants its own cap runs itself again with
 * it: `process.execve` keeps the pid, the arguments, the environment and the open standard streams.
 */
const FLAG = '--max-semi-space-size'

/** NODE_OPTIONS' options, as node splits them (an option may be in double quotes). */
const options = (nodeOptions: string) => [...nodeOptions.matchAll(/"((?:\\.|[^"\\])*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!)

/** The operator chose a semi-space already (node's flags or NODE_OPTIONS): theirs is kept. */
export function semiSpaceChosen(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...options(nodeOptions ?? '')].some((a) => a === FLAG || a.startsWith(`${FLAG}=`))
}

/**
 * Runs this process again with `--max-semi-space-size=<semiSpaceMb>` unless `semiSpaceMb` is 0, the
 * operator chose a size already, or this Node has no `process.execve` (older than 22.15, Windows):
 * then it returns and the process goes on as it is. Call it before loading what the role needs.
 */
export function capYoungGeneration(semiSpaceMb: number): void {
  // NODE_OPTIONS is node's own setting, not Wire's: read here only to keep an operator's choice
  if (semiSpaceMb <= 0 || semiSpaceChosen(process.execArgv, process.env.NODE_OPTIONS)) return
  if (typeof process.execve !== 'function') return
  process.execve(process.execPath, [process.execPath, ...process.execArgv, `${FLAG}=${semiSpaceMb}`, ...process.argv.slice(1)], process.env)
}
