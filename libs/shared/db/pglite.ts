import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { usableTemplate } from './pglite-template.js'
import type { Db, QueryResult } from './types.js'

/** shared_buffers of the embedded database, MB: WIRE_EMBEDDED_SHARED_BUFFERS_MB's default. */
export const EMBEDDED_SHARED_BUFFERS_MB = 16

export interface PgliteOptions {
  /** PostgreSQL's shared_buffers, MB (WIRE_EMBEDDED_SHARED_BUFFERS_MB). */
  sharedBuffersMb?: number
  /** A new database is loaded from the template (pglite-template.ts) when there is a usable one: true by default; false runs initdb. */
  template?: boolean
}

export type EmbeddedDb = Db & { readonly pglite: PGlite }

interface Opened {
  db: Promise<EmbeddedDb>
  holders: number
  /** Set while the last holder closes it: an opener meanwhile waits, then opens it afresh. */
  closing?: Promise<void>
}

/** The directories this process has open, by absolute path (`memory://` databases are never shared). */
const opened = new Map<string, Opened>()

/**
 * Embedded PostgreSQL (PGlite, WASM) in a local directory, behind the same Db interface as `pg`.
 * One backend session: PGlite runs one statement at a time and a transaction holds it exclusively.
 *
 * One instance per directory per process: roots opening the same WIRE_DATA_DIR (a network in one
 * process: boards, the identity network and the aggregator, each in its schema) share it, and it
 * closes when the last of them closes it. Two instances on one directory would write the same
 * files (the directory lock stops other processes, not this one). The first opener's options hold.
 */
export async function pgliteDb(dataDir: string, opts: PgliteOptions = {}): Promise<EmbeddedDb> {
  if (dataDir.startsWith('memory://')) return openPglite(dataDir, opts)
  const key = resolve(dataDir)
  for (let o = opened.get(key); o; o = opened.get(key)) {
    if (o.closing) {
      await o.closing.catch(() => {})
      continue
    }
    o.holders++
    try {
      return held(key, o, await o.db)
    } catch (err) {
      o.holders--
      throw err
    }
  }
  const o: Opened = { db: openPglite(dataDir, opts), holders: 1 }
  opened.set(key, o)
  try {
    return held(key, o, await o.db)
  } catch (err) {
    opened.delete(key)
    throw err
  }
}

/** One holder's handle: its close() lets go; the last one closes the database. */
function held(key: string, o: Opened, db: EmbeddedDb): EmbeddedDb {
  let released = false
  return {
    ...db,
    close: async () => {
      if (released) return
      released = true
      if (--o.holders > 0) return
      o.closing = db.close().finally(() => opened.delete(key))
      await o.closing
    },
  }
}

async function openPglite(dataDir: string, opts: PgliteOptions): Promise<EmbeddedDb> {
  let unlock = () => {}
  let restoreUmask = () => {}
  const onDisk = !dataDir.startsWith('memory://')
  if (onDisk) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    tightenDataDir(dataDir) // a directory made before, by hand or by an older version
    restoreUmask = ownerOnlyUmask()
    try {
      unlock = lockDataDir(dataDir)
    } catch (err) {
      restoreUmask()
      throw err
    }
  }
  // loaded here, not at the top: a process on PostgreSQL never loads PGlite (some 7 MB of RSS)
  const { PGlite } = await import('@electric-sql/pglite')
  // @NOTE PGlite's postgres takes its shared memory from the WASM heap and zeroes it at start, so
  // all of shared_buffers is resident from the first second: initdb's 128 MB were ~150 of a fresh
  // process's ~200 MB of WASM memory (bench/results/embedded-database.md). On the command
  // line, after PGlite's own parameters, it wins over postgresql.conf.
  const shared = `shared_buffers=${opts.sharedBuffersMb ?? EMBEDDED_SHARED_BUFFERS_MB}MB`
  // @NOTE a first start runs initdb in a second PGlite instance, which copies its whole 128 MB heap
  // and writes it back for each of initdb's postgres runs: small buffers and few connections there
  // keep that instance near its minimum (first start peak 560 -> ~480 MiB with the baseline
  // compiler). Only initdb's: the command line's max_connections below restores PostgreSQL's 100.
  const initDbStartParams = ['-c', shared, '-c', 'max_connections=10']
  // a new database from the template when there is one for this PGlite (no initdb: half the peak)
  const fresh = !onDisk || !existsSync(join(dataDir, 'PG_VERSION'))
  const loadDataDir = opts.template !== false && fresh ? usableTemplate() : undefined
  const startParams = [...PGlite.defaultStartParams, '-c', shared, '-c', 'max_connections=100']
  const db = await PGlite.create(dataDir, { startParams, initDbStartParams, ...(loadDataDir && { loadDataDir }) }).catch((err: unknown) => {
    unlock()
    restoreUmask()
    throw err
  })
  // a first start's initdb sets its files' modes itself (0666), past the umask
  if (onDisk) tightenDataDir(dataDir)
  const wrap =
    (q: { query: PGlite['query'] }) =>
    async <R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> => {
      const r = await q.query<R>(sql, params as unknown[])
      // @NOTE PGlite reports affectedRows 0 for a SELECT: count the rows it returned too
      return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) }
    }
  return {
    kind: 'embedded',
    pglite: db,
    query: wrap(db),
    async exec(sql) {
      await db.exec(sql)
    },
    transaction: (fn) => db.transaction((tx) => fn({ query: wrap(tx), exec: async (sql) => void (await tx.exec(sql)) })),
    close: async () => {
      await db.close()
      unlock()
      restoreUmask()
    },
  }
}

/** The embedded database in `dataDir` has been created (PostgreSQL's PG_VERSION is there): no initdb on open. */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return dataDir.startsWith('memory://') || existsSync(join(dataDir, 'PG_VERSION'))
}

/**
 * @NOTE PGlite has no lock of its own: a second process on the same directory would start and
 * both would write the same files. A lock file holding the owner's pid stops the second one with a
 * clear message; a lock left by a process that no longer runs is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'wire.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' })
      return () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file)
        } catch {} // already gone
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const owner = Number(readFileSync(file, 'utf8').trim())
    if (owner === process.pid) return () => {} // this process already holds it
    if (Number.isInteger(owner) && owner > 0 && isRunning(owner))
      throw Object.assign(
        new Error(
          `the embedded database in ${dataDir} is in use by process ${owner}: stop it, or set WIRE_DATA_DIR to another directory (or DATABASE_URL to share a PostgreSQL)`,
        ),
        { code: 'EWIRE_DATA_DIR_BUSY' },
      )
    unlinkSync(file) // stale
  }
  throw new Error(`could not lock ${file}`)
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' // alive, owned by another user
  }
}

/**
 * The embedded database holds every signal and the board's keys: its directory is the owner's
 * only (0700), and so is every file and directory in it (0600, 0700), whatever the umask. Symbolic
 * links are left as they are (their targets are not ours to change).
 */
function tightenDataDir(dir: string): void {
  chmodSync(dir, 0o700)
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const st = lstatSync(path)
    if (st.isDirectory()) tightenDataDir(path)
    else if (st.isFile() && (st.mode & 0o777) !== 0o600) chmodSync(path, 0o600)
  }
}

/**
 * @NOTE postgres creates most files 0600 itself, but a few (pg_internal.init, rewritten at every
 * start) with the process's umask: while the embedded database is open, the umask also takes away
 * every bit for group and others (restored on close). Files this process writes elsewhere meanwhile
 * (a `wire backup` file) are the owner's only too, which is what they should be.
 */
let umaskHolders = 0
let umaskBefore = 0

function ownerOnlyUmask(): () => void {
  if (umaskHolders++ === 0) {
    umaskBefore = process.umask(0o077)
    process.umask(umaskBefore | 0o077)
  }
  let released = false
  return () => {
    if (released) return
    released = true
    if (--umaskHolders === 0) process.umask(umaskBefore)
  }
}
