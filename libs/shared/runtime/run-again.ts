/**
 * Settings a process can only have from its start, so a process that wants them runs itself
 * again with them: `process.execve` keeps the pid, the arguments, the environment and the open
 * standard streams.
 *
 * V8's young generation (two semi-spaces) grows towards 64 MB each under load and while modules
 * load, and keeps the pages: most of a fresh reader's RSS past its code, and most of what a waiting
 * long-poll costs at 10,000 followers (bench/results/reader-memory.md). Its size is the
 * flag --max-semi-space-size.
 *
 * glibc gives each thread that allocates at once with another a malloc arena of its own (up to 8 per
 * core), and an arena keeps what it once held. The embedded database's WebAssembly is compiled on
 * V8's worker threads, whose arenas kept 40-80 MB of a fresh embedded process; with one arena that
 * memory is reused and trimmed (bench/results/embedded-database.md). Its number is the
 * environment variable MALLOC_ARENA_MAX, which glibc reads once, at start.
 */
const FLAG = '--max-semi-space-size'
/**
 * V8 compiles the embedded database's WebAssembly with its baseline compiler (Liftoff) and
 * recompiles the hottest functions with its optimizing one (TurboFan) on worker threads: in the
 * first second of a start, one such compilation held a ~500 MB mapping (RSS peak 0.7 GB; 1.1 GB on a
 * first start, with initdb). With this flag V8 never optimizes: no peak, ~1.5x the CPU for scans.
 */
const BASELINE_ONLY = '--liftoff-only'

/** NODE_OPTIONS' options, as node splits them (an option may be in double quotes). */
const options = (nodeOptions: string) => [...nodeOptions.matchAll(/"((?:\\.|[^"\\])*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!)

/** The operator chose a semi-space already (node's flags or NODE_OPTIONS): theirs is kept. */
export function semiSpaceChosen(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...options(nodeOptions ?? '')].some((a) => a === FLAG || a.startsWith(`${FLAG}=`))
}

export interface RunAgainOptions {
  /** --max-semi-space-size=<semiSpaceMb> (READER_SEMI_SPACE_MB); 0: node's default. */
  semiSpaceMb: number
  /** --liftoff-only: WebAssembly by V8's baseline compiler alone (WIRE_EMBEDDED_WASM_OPTIMIZE=0). */
  wasmBaselineOnly?: boolean
  /** MALLOC_ARENA_MAX=<mallocArenas> (WIRE_EMBEDDED_MALLOC_ARENAS); 0 or absent: glibc's default. */
  mallocArenas?: number
}

/**
 * Runs this process again with what it lacks of `opts`: the semi-space flag unless its size is 0
 * or the operator chose one already, the baseline-only flag when asked, MALLOC_ARENA_MAX unless 0
 * or already in the environment. With
 * nothing lacking, or without `process.execve` (Windows), it returns and the
 * process goes on as it is. Call it before loading what the role needs.
 */
export function runAgainWith(opts: RunAgainOptions): void {
  // NODE_OPTIONS and MALLOC_ARENA_MAX are node's and glibc's settings, not Wire's: read here only to keep an operator's choice
  const flags = opts.semiSpaceMb > 0 && !semiSpaceChosen(process.execArgv, process.env.NODE_OPTIONS) ? [`${FLAG}=${opts.semiSpaceMb}`] : []
  if (opts.wasmBaselineOnly && !process.execArgv.includes(BASELINE_ONLY)) flags.push(BASELINE_ONLY)
  const arenas = opts.mallocArenas && process.env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: String(opts.mallocArenas) } : {}
  if (!flags.length && !Object.keys(arenas).length) return
  if (typeof process.execve !== 'function') return
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...flags, ...process.argv.slice(1)], {
    ...process.env,
    ...arenas,
  })
}
