import type { Config } from '../../libs/shared/config/index.js'

type Embedded = Extract<Config['db'], { kind: 'embedded' }>

/** This process's peak RSS so far (VmHWM), MiB; null where /proc is not there. */
async function peakMib(): Promise<number | null> {
  const { readFileSync } = await import('node:fs')
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    return kb ? Math.round(Number(kb) / 1024) : null
  } catch {
    return null
  }
}

/**
 * The embedded database's first start, on its own: loaded from the template that ships with Wire
 * (db/pglite-template.ts, ~270 MiB peak), or where none fits the installed PGlite, made by PGlite's
 * initdb in a second instance of the database, whose memory (two copies of a 128 MB heap) is most
 * of a first start's peak (478-549 MiB), and which a process keeps as RSS once touched. So the single process creates the database
 * first, says so (it takes 10-40 s), and then runs itself again (`process.execve`: same pid,
 * arguments and environment, a fresh address space) to serve on the database it made, as any later
 * start does. Returns at once when the database exists. docs/deploy.md, "Size and scale".
 */
export async function createEmbeddedDatabaseFirst(db: Embedded, say: (line: string) => void): Promise<void> {
  const { embeddedDatabaseExists, pgliteDb, templateUsable } = await import('../../libs/shared/db/index.js')
  if (embeddedDatabaseExists(db.dataDir)) return
  const how = templateUsable() ? 'from its template, once; 2-10 s' : "PostgreSQL's initdb, once; 10-40 s"
  say(`wire: first start: creating the embedded database in ${db.dataDir} (${how})…`)
  const started = performance.now()
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const collect = setInterval(gc, 50)
  const created = await pgliteDb(db.dataDir, { sharedBuffersMb: db.sharedBuffersMb })
  clearInterval(collect)
  await created.close()
  const peak = await peakMib()
  say(
    `wire: created in ${((performance.now() - started) / 1000).toFixed(1)} s${peak ? ` (peak RSS ${peak} MiB)` : ''}; starting the board on it`,
  )
  if (typeof process.execve !== 'function') return // Windows: go on in this process
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], process.env as Record<string, string>)
}
