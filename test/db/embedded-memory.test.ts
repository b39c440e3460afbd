import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { EMBEDDED_SHARED_BUFFERS_MB, pgliteDb } from '../../libs/shared/db/index.js'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { freePort, startProcess } from '../helpers/process.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'

// The embedded database's memory settings reach where they act
// (bench/results/embedded-database.md): shared_buffers (WIRE_EMBEDDED_SHARED_BUFFERS_MB) the
// database itself, and MALLOC_ARENA_MAX (WIRE_EMBEDDED_MALLOC_ARENAS) the environment the single
// process runs with.

// real first starts (initdb) of the embedded database: minutes on a loaded machine
t.setTimeout(900_000)

const sharedBuffers = async (q: { query: (sql: string) => Promise<{ rows: unknown[] }> }) =>
  ((await q.query('show shared_buffers')).rows[0] as { shared_buffers: string }).shared_buffers

t.test('shared_buffers: pgliteDb’s default is the setting’s, and the setting reaches the board’s database', async (t) => {
  const db = await pgliteDb('memory://')
  t.equal(await sharedBuffers(db), `${EMBEDDED_SHARED_BUFFERS_MB}MB`, 'not initdb’s 128MB')
  await db.close()
  const defaults = loadConfig({}).db
  t.equal(defaults.kind === 'embedded' && defaults.sharedBuffersMb, EMBEDDED_SHARED_BUFFERS_MB)
  const cfg = loadConfig({ WIRE_DATA_DIR: 'memory://', WIRE_EMBEDDED_SHARED_BUFFERS_MB: '24' })
  const infra = await openInfra(cfg, createLogger('server', 'silent'), { migrate: true })
  t.teardown(() => infra.close())
  t.equal(await sharedBuffers(infra.primary), '24MB')
})

/**
 * Starts the real single process on a data directory of `t`'s own with `extra` on top of this
 * environment (no DATABASE_URL, REDIS_URL or MALLOC_ARENA_MAX unless `extra` has them), reads
 * `/proc/<pid>/<file>` once it is live, then stops it: what the process runs with after it ran itself again.
 */
async function readOfLiveServer(t: Test, extra: Record<string, string>, file: 'environ' | 'cmdline'): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'wire-run-again-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: 'info',
    WIRE_CONFIG: '/nonexistent/board.json',
    WIRE_DATA_DIR: dir,
    SERVER_PORT: String(await freePort()),
    ...extra,
  }
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'MALLOC_ARENA_MAX']) if (!(k in extra)) delete env[k]
  const p = await startProcess(t, process.execPath, [projectPath('dist/apps/server/main.js')], env, /is live at/, 240_000)
  const seen = readFileSync(`/proc/${p.child.pid!}/${file}`, 'utf8').split('\0')
  p.signal('SIGTERM')
  await p.exited
  return seen
}

t.test('the embedded single process runs itself with MALLOC_ARENA_MAX, same pid; the operator’s own or 0 is kept', async (t) => {
  const run = async (extra: Record<string, string>) =>
    (await readOfLiveServer(t, extra, 'environ')).filter((v) => v.startsWith('MALLOC_ARENA_MAX='))
  t.same(await run({}), ['MALLOC_ARENA_MAX=1'], 'the default: one arena')
  t.same(await run({ WIRE_EMBEDDED_MALLOC_ARENAS: '3' }), ['MALLOC_ARENA_MAX=3'], 'the setting')
  t.same(await run({ MALLOC_ARENA_MAX: '4' }), ['MALLOC_ARENA_MAX=4'], 'the operator’s own')
  t.same(await run({ WIRE_EMBEDDED_MALLOC_ARENAS: '0' }), [], '0: glibc’s default')
  const schema = uniqueSchema()
  t.teardown(() => dropSchema(schema))
  t.same(await run({ DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema }), [], 'on PostgreSQL: not asked')
})

t.test(
  'the embedded single process runs with V8’s baseline WebAssembly compiler only unless WIRE_EMBEDDED_WASM_OPTIMIZE=1, same pid',
  async (t) => {
    const flags = async (extra: Record<string, string>) =>
      (await readOfLiveServer(t, extra, 'cmdline')).filter((a) => a === '--liftoff-only')
    t.same(await flags({}), ['--liftoff-only'], 'the default: the baseline compiler only')
    t.same(await flags({ WIRE_EMBEDDED_WASM_OPTIMIZE: '1' }), [], '1: V8 optimizes the database’s hottest functions')
    const schema = uniqueSchema()
    t.teardown(() => dropSchema(schema))
    t.same(await flags({ DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema }), [], 'on PostgreSQL: not asked')
  },
)

const MIB = 2 ** 20
/** VmHWM of a live process: the most RSS it has had since it last ran itself again. */
const peakOf = (pid: number) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024

t.test('the default starts within 512 MiB: the first start creates the database on its own, says so, then serves', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-first-start-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const start = async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      LOG_LEVEL: 'info',
      WIRE_CONFIG: '/nonexistent/board.json',
      WIRE_DATA_DIR: dir,
      SERVER_PORT: String(await freePort()),
    }
    for (const k of ['DATABASE_URL', 'REDIS_URL', 'MALLOC_ARENA_MAX', 'WIRE_EMBEDDED_WASM_OPTIMIZE', 'NODE_OPTIONS']) delete env[k]
    const p = await startProcess(t, process.execPath, [projectPath('dist/apps/server/main.js')], env, /is live at/, 240_000)
    const peak = peakOf(p.child.pid!)
    p.signal('SIGTERM')
    await p.exited
    return { out: p.output(), peak }
  }
  const first = await start()
  t.match(
    first.out,
    `wire: first start: creating the embedded database in ${dir} (from its template, once; 2-10 s)…\n`,
    'says what it is doing and for how long',
  )
  const created = /wire: created in [\d.]+ s \(peak RSS (\d+) MiB\); starting the board on it\n/.exec(first.out)
  t.ok(created, 'and when it is done, with its peak')
  // @NOTE loading the template (db/pglite-template.ts) measured ~240-270 MiB; PGlite's initdb, which
  // it replaces, 478-549 MiB (docs/deploy.md, "Size and scale")
  t.ok(Number(created?.[1]) < 512, `creating it peaked at ${created?.[1]} MiB (< 512)`)
  t.ok(first.peak < 512 * MIB, `then the board, run again in a fresh address space, peaked at ${Math.round(first.peak / MIB)} MiB (< 512)`)
  t.notMatch(first.out, /failover may lose/, 'no failover warning: the embedded database has no standby and no failover')
  const second = await start()
  t.notMatch(second.out, /first start/, 'a later start finds the database')
  t.ok(second.peak < 512 * MIB, `a later start peaked at ${Math.round(second.peak / MIB)} MiB (< 512)`)
})
