import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

// BENCH_MEMORY_DETAIL=1: where a role's RSS is, printed beside a bench's own RSS figures (which it
// does not change): the process's mappings by kind, and V8's heap spaces (used / committed) from
// its /metrics. With `gc`, also the same after a full garbage collection asked through the
// inspector (SIGUSR1 opens it on the port BENCH_READER_NODE_OPTIONS=--inspect-port=N names).

const MB = 2 ** 20
const mb = (n: number) => Math.round((n / MB) * 10) / 10

/** RSS of the mappings of `pid` (/proc/<pid>/smaps), in MB: V8's 256 KiB pages, other anonymous (malloc, large objects), the heap, files. */
export function smapsSummary(pid: number) {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8')
  const out = { v8Pages: 0, anonOther: 0, brk: 0, file: 0, total: 0 }
  let kind: keyof typeof out = 'anonOther'
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line)
    if (head) {
      const size = parseInt(head[2]!, 16) - parseInt(head[1]!, 16)
      const name = head[4]!.trim()
      kind = name === '[heap]' ? 'brk' : name.startsWith('/') ? 'file' : size === 256 * 1024 ? 'v8Pages' : 'anonOther'
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) {
      out[kind] += Number(rss[1]) * 1024
      out.total += Number(rss[1]) * 1024
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, mb(v)]))
}

/** V8's heap spaces from prom-client's default metrics: `space: used/committed` MB. */
export async function heapSpaces(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text()
  const spaces: Record<string, { used: number; total: number }> = {}
  for (const m of text.matchAll(/^nodejs_heap_space_size_(used|total)_bytes\{space="(\w+)"\} (\d+)/gm))
    (spaces[m[2]!] ??= { used: 0, total: 0 })[m[1] === 'used' ? 'used' : 'total'] = Number(m[3])
  const ext = /^nodejs_external_memory_bytes (\d+)/m.exec(text)
  return {
    ...Object.fromEntries(
      Object.entries(spaces)
        .filter(([, s]) => s.total > 0)
        .map(([k, s]) => [k, `${mb(s.used)}/${mb(s.total)}`]),
    ),
    external: ext ? mb(Number(ext[1])) : undefined,
  }
}

/** A DevTools protocol session with `pid`'s inspector on `port` (SIGUSR1 opens it). */
async function session(pid: number, port: number) {
  process.kill(pid, 'SIGUSR1')
  let target: string | undefined
  for (let i = 0; i < 100 && !target; i++) {
    target = await fetch(`http://127.0.0.1:${port}/json/list`).then(
      async (r) => ((await r.json()) as Array<{ webSocketDebuggerUrl: string }>)[0]?.webSocketDebuggerUrl,
      () => undefined,
    )
    if (!target) await sleep(50)
  }
  if (!target) throw new Error('no inspector')
  const ws = new WebSocket(target)
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  let id = 0
  const calls = new Map<number, (r: unknown) => void>()
  ws.onmessage = (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown }
    if (m.id !== undefined) calls.get(m.id)?.(m.result)
  }
  return {
    call: (method: string, params: object = {}) =>
      new Promise<unknown>((resolve) => {
        calls.set(++id, resolve)
        ws.send(JSON.stringify({ id, method, params }))
      }),
    close: () => ws.close(),
  }
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

/** Self sizes of a sampling heap profile by allocation site (function, file:line) and the stack above it (2 frames). */
function bySite(root: ProfileNode) {
  const out = new Map<string, number>()
  const walk = (n: ProfileNode, up: string[]) => {
    const f = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`
    const path = [f, ...up].slice(0, 3)
    if (n.selfSize) out.set(path.join(' < '), (out.get(path.join(' < ')) ?? 0) + n.selfSize)
    for (const c of n.children) walk(c, path)
  }
  walk(root, [])
  return out
}

const sessions = new Map<number, Awaited<ReturnType<typeof session>>>()

export async function memoryDetail(
  label: string,
  roles: Array<{ url: string; child: { pid?: number } }>,
  o: { gc?: boolean; sample?: boolean } = {},
) {
  const port = /--inspect-port=(\d+)/.exec(process.env.BENCH_READER_NODE_OPTIONS ?? process.env.BENCH_INSPECT_OPTIONS ?? '')?.[1]
  for (const r of roles) {
    const pid = r.child.pid!
    process.stdout.write(
      `  memory ${label} (pid ${pid}): smaps MB ${JSON.stringify(smapsSummary(pid))}; heap MB used/committed ${JSON.stringify(await heapSpaces(r.url))}\n`,
    )
    if (!port) continue
    // sampling from here: what survives the scavenges from now on, by where it was allocated
    if (o.sample) {
      const s = await session(pid, Number(port))
      sessions.set(pid, s)
      await s.call('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMinorGC: false,
        includeObjectsCollectedByMajorGC: process.env.BENCH_MEMORY_DETAIL_MAJOR === '1',
      })
    }
    if (o.gc && !sessions.has(pid)) {
      const s = await session(pid, Number(port))
      await s.call('HeapProfiler.collectGarbage')
      await sleep(500)
      s.close()
      process.stdout.write(
        `  memory ${label} after a full GC: smaps MB ${JSON.stringify(smapsSummary(pid))}; heap MB used/committed ${JSON.stringify(await heapSpaces(r.url))}\n`,
      )
    } else if (o.gc) {
      const s = sessions.get(pid)!
      const before = bySite(((await s.call('HeapProfiler.getSamplingProfile')) as { profile: { head: ProfileNode } }).profile.head)
      await s.call('HeapProfiler.collectGarbage')
      await sleep(500)
      const after = bySite(((await s.call('HeapProfiler.getSamplingProfile')) as { profile: { head: ProfileNode } }).profile.head)
      process.stdout.write(
        `  memory ${label} after a full GC: smaps MB ${JSON.stringify(smapsSummary(pid))}; heap MB used/committed ${JSON.stringify(await heapSpaces(r.url))}\n`,
      )
      const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
      process.stdout.write(
        `  sampled since the followers came: ${mb(sum(before))} MB surviving scavenges, ${mb(sum(after))} MB of it still live after a full GC\n`,
      )
      const garbage = [...before]
        .map(([k, v]) => [k, v - (after.get(k) ?? 0)] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 25)
      for (const [k, v] of garbage) process.stdout.write(`    garbage ${(v / 1024).toFixed(0)} KB  ${k}\n`)
      const live = [...after].sort((a, b) => b[1] - a[1]).slice(0, 30)
      for (const [k, v] of live) process.stdout.write(`    live ${(v / 1024).toFixed(0)} KB  ${k}\n`)
      await s.call('HeapProfiler.stopSampling')
      s.close()
      sessions.delete(pid)
    }
  }
}
