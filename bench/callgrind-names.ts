import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'

// node dist/bench/callgrind-names.js <callgrind file> [perf map] [top]: where a phase's instructions went,
// by function, with V8's compiled JavaScript named. callgrind knows native functions by their symbols
// but JIT code only by address (`0x…`); node's --perf-basic-prof writes /tmp/perf-<pid>.map (start,
// size, name of every code object V8 made), which names them here. Each function's own instructions
// (not those of what it calls), summed over the addresses inside it; the map defaults to the pid the
// callgrind file names. bench:instructions with BENCH_CALLGRIND_KEEP=<dir> keeps the files and maps.

const [file, mapArg, topArg] = process.argv.slice(2)
if (!file) throw new Error('usage: callgrind-names <callgrind file> [perf map] [top]')
const pid = /^pid: (\d+)/m.exec(readFileSync(file, 'utf8').slice(0, 4096))?.[1]
const mapFile = mapArg && mapArg !== '-' ? mapArg : `/tmp/perf-${pid}.map`
const top = Number(topArg ?? 40)

/** perf map: "<start hex> <size hex> <name>" per line, sorted by start for the lookup. */
const ranges = existsSync(mapFile)
  ? readFileSync(mapFile, 'utf8')
      .split('\n')
      .map((l) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => ({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! }))
      .sort((a, b) => a.start - b.start)
  : []
if (!ranges.length) process.stderr.write(`no perf map at ${mapFile}: JIT code stays unnamed\n`)

function nameOf(address: number): string | undefined {
  let lo = 0
  let hi = ranges.length - 1
  let found: (typeof ranges)[number] | undefined
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (ranges[mid]!.start <= address) (found = ranges[mid]), (lo = mid + 1)
    else hi = mid - 1
  }
  return found && address < found.end ? found.name : undefined
}

// callgrind_annotate's list of functions by their own instructions, every one of them
const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 })
const own = new Map<string, number>()
let total = 0
for (const line of out.split('\n')) {
  const m = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line)
  if (!m) continue
  const ir = Number(m[1]!.replace(/,/g, ''))
  if (m[2] === 'PROGRAM TOTALS') {
    total = ir
    continue
  }
  const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(m[2]!)
  const name = jit
    ? (nameOf(parseInt(jit[1]!, 16)) ?? 'JIT code (unnamed)')
    : m[2]!.replace(/^\?\?\?:/, '').replace(/ \[\/.*node\/bin\/node\]$/, '')
  own.set(name, (own.get(name) ?? 0) + ir)
}
const rows = [...own].sort((a, b) => b[1] - a[1]).slice(0, top)
process.stdout.write(`${total.toLocaleString('en-US')} instructions in ${file}\n`)
for (const [name, ir] of rows)
  process.stdout.write(
    `${ir.toLocaleString('en-US').padStart(14)} ${((ir / total) * 100).toFixed(2).padStart(6)} %  ${name.slice(0, 160)}\n`,
  )
