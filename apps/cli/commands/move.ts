import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { Command } from 'commander'
import { fingerprintKey } from '../../../libs/shared/auth/index.js'
import { loadConfig, type Config } from '../../../libs/shared/config/index.js'
import {
  ident,
  migrate,
  pgliteDb,
  postgresDb,
  readStoredFingerprintKey,
  restoreBoardBackup,
  writeBoardBackup,
  type BackupCounts,
  type Db,
  type RestoreReport,
} from '../../../libs/shared/db/index.js'
import { UsageError, type Io } from '../io.js'
import { friendlyError, lineSink, linesOf, openFileSink } from './move-io.js'

/** The board's database as the server would open it, and how its migration runner is reached. */
interface BoardDb {
  db: Db
  migrateWith: string | Db
  schema: string
  where: string
}

async function openBoardDb(cfg: Config): Promise<BoardDb> {
  if (cfg.db.kind === 'postgres') {
    const db = postgresDb(cfg.db.directUrl, { max: 2, applicationName: 'wire-move' })
    return { db, migrateWith: cfg.db.directUrl, schema: cfg.db.schema, where: `PostgreSQL (schema ${cfg.db.schema})` }
  }
  const db = await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
  return { db, migrateWith: db, schema: cfg.db.schema, where: `the embedded database in ${cfg.db.dataDir} (schema ${cfg.db.schema})` }
}

/** Brings the source to this Wire's schema (as its next start would), then writes it through `write`. */
async function backUp(cfg: Config, src: BoardDb, write: (line: string) => Promise<void>): Promise<BackupCounts> {
  await migrate(src.migrateWith, src.schema)
  const key = fingerprintKey({
    secret: cfg.secrets.fingerprintSecret,
    stored: await readStoredFingerprintKey(src.db, ident(src.schema)),
    ...(cfg.db.kind === 'postgres' ? { databaseUrl: cfg.db.url } : { dataDir: cfg.db.dataDir }),
  })
  return writeBoardBackup(src.db, src.schema, { fingerprintKey: key, graceSeconds: cfg.sweep.graceSeconds }, write)
}

const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`
const summary = (c: BackupCounts) =>
  `${n(c.signals, 'signal')} (${c.pinned} pinned), ${n(c.rules, 'rule')}, ${n(c.stats_buckets, 'stats minute')}, ${n(c.idempotency_keys, 'idempotency key')}`

/** What the operator must know after a restore: where it went, and a FINGERPRINT_SECRET that overrides the carried key. */
async function reportRestore(io: Io, cfg: Config, dst: BoardDb, r: RestoreReport, done: string) {
  io.out(
    `${done} ${summary(r.counts)} to ${dst.where}; feed head ${r.feedHead}${r.applied.length ? `; applied ${r.applied.join(', ')}` : ''}`,
  )
  const stored = await readStoredFingerprintKey(dst.db, ident(dst.schema))
  if (cfg.secrets.fingerprintSecret && cfg.secrets.fingerprintSecret !== stored)
    io.err(
      "wire: warning: FINGERPRINT_SECRET is set here and is not the board's key: while it is set, every local identity gets a new id. Unset it on the servers (the board now carries its key), or set it to the value the board had.",
    )
}

/** `wire backup`, `wire restore`, `wire move` (docs/operations.md "Moving a board"). */
export function moveCommands(io: Io): (program: Command) => void {
  const withDb = async <T>(cfg: Config, fn: (b: BoardDb) => Promise<T>): Promise<T> => {
    const b = await openBoardDb(cfg)
    try {
      return await fn(b)
    } finally {
      await b.db.close()
    }
  }
  const guarded =
    <A extends unknown[]>(fn: (...a: A) => Promise<void>) =>
    (...a: A) =>
      fn(...a).catch((err: unknown) => Promise.reject(friendlyError(err)))

  return (program) => {
    program
      .command('backup')
      .description("write the server's board (DATABASE_URL, else the embedded database in WIRE_DATA_DIR) to a file, as JSON lines")
      .requiredOption(
        '--to <file>',
        'the backup file, or - for standard output (a file is written under a temporary name, renamed once complete)',
      )
      .action(
        guarded(async (o: { to: string }) => {
          const cfg = loadConfig(io.env)
          assertEmbeddedBoard(cfg)
          const file = o.to === '-' ? null : await openFileSink(o.to)
          try {
            const counts = await withDb(cfg, (src) => backUp(cfg, src, file ? file.write : lineSink(io.streams.out)))
            await file?.commit()
            ;(file ? io.out : io.err)(`backed up ${summary(counts)}${file ? ` to ${o.to}` : ''}`)
          } finally {
            await file?.abandon()
          }
        }),
      )

    program
      .command('restore')
      .description("load a backup into the server's database (DATABASE_URL, else WIRE_DATA_DIR), migrating it first")
      .requiredOption('--from <file>', 'the backup file, or - for standard input')
      .option('--replace', 'the target already has signals: delete its signals, rules and stats and restore over it')
      .action(
        guarded(async (o: { from: string; replace?: boolean }) => {
          const cfg = loadConfig(io.env)
          await withDb(cfg, async (dst) => {
            const r = await restoreBoardBackup(dst.db, dst.schema, linesOf(o.from === '-' ? io.streams.in : o.from), {
              migrateWith: dst.migrateWith,
              replace: o.replace === true,
            })
            await reportRestore(io, cfg, dst, r, 'restored')
          })
        }),
      )

    program
      .command('move')
      .description('move the board from the embedded database (WIRE_DATA_DIR) to PostgreSQL (DATABASE_URL, WIRE_PG_SCHEMA) in one step')
      .option('--replace', 'the target schema already has signals: delete its signals, rules and stats and move over it')
      .action(
        guarded(async (o: { replace?: boolean }) => {
          const cfg = loadConfig(io.env)
          if (cfg.db.kind !== 'postgres')
            throw new UsageError('wire move needs DATABASE_URL: the PostgreSQL to move the board to (the board comes from WIRE_DATA_DIR)')
          const from = loadConfig({ ...io.env, DATABASE_URL: undefined })
          const dataDir = assertEmbeddedBoard(from)
          await withDb(from, (src) =>
            withDb(cfg, async (dst) => {
              src.schema = await embeddedSchema(src.db, src.schema)
              src.where = `the embedded database in ${dataDir} (schema ${src.schema})`
              const pipe = new PassThrough()
              const made = backUp(from, src, lineSink(pipe)).then(
                (c) => (pipe.end(), c),
                (err: unknown) => (pipe.destroy(err as Error), Promise.reject(err)),
              )
              const restored = restoreBoardBackup(dst.db, dst.schema, linesOf(pipe), {
                migrateWith: dst.migrateWith,
                replace: o.replace === true,
              }).catch((err: unknown) => {
                pipe.destroy(new Error('the restore stopped'))
                return Promise.reject(err)
              })
              const [m, r] = await Promise.allSettled([made, restored])
              if (r.status === 'rejected') throw r.reason
              if (m.status === 'rejected') throw m.reason
              await reportRestore(io, cfg, dst, r.value, `moved from ${src.where}:`)
              io.out(`next: start the server with DATABASE_URL set. ${dataDir} is left as it was: remove it once the new board runs.`)
            }),
          )
        }),
      )
  }
}

/** An embedded source must exist: opening an empty directory would make a new, empty board. Returns its directory. */
function assertEmbeddedBoard(cfg: Config): string {
  if (cfg.db.kind !== 'embedded') return ''
  if (!existsSync(join(cfg.db.dataDir, 'PG_VERSION')))
    throw new UsageError(`no embedded board in ${cfg.db.dataDir} (WIRE_DATA_DIR): set WIRE_DATA_DIR to the directory the board ran with`)
  return cfg.db.dataDir
}

/** The embedded board's schema: WIRE_PG_SCHEMA when the board is there, else `public` (a trial board's, whatever the target's schema). */
async function embeddedSchema(db: Db, configured: string): Promise<string> {
  const has = async (schema: string) =>
    (await db.query<{ t: string | null }>(`select to_regclass($1)::text as t`, [`${ident(schema)}.board`])).rows[0]?.t != null
  if (await has(configured)) return configured
  if (configured !== 'public' && (await has('public'))) return 'public'
  throw new UsageError(`the embedded database holds no board in schema ${configured}`)
}
