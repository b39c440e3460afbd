import type { Command } from 'commander'
import { formatUnsetForPublicHost, loadBoardFile, loadConfig, type Config } from '../../../libs/shared/config/index.js'
import { migrate, pgliteDb, postgresDb, type Db } from '../../../libs/shared/db/index.js'
import { databaseHint } from '../../../libs/shared/database-hint.js'
import { UsageError, type Io } from '../io.js'

/** Where the database is, without its password: `127.0.0.1:5432/wire`, or the embedded directory. */
function databaseName(cfg: Config): string {
  if (cfg.db.kind !== 'postgres') return `the embedded database in ${cfg.db.dataDir}`
  try {
    const u = new URL(cfg.db.directUrl)
    return `${u.host}${u.pathname}`
  } catch {
    return 'DATABASE_URL'
  }
}

/** The innermost message: the driver's own words (`connect ECONNREFUSED …`, `database "x" does not exist`). */
function causeText(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown } | null
  while (e?.cause instanceof Error) e = e.cause as typeof e
  return String(e?.message ?? err)
}

const describe = (cfg: Config) =>
  [
    cfg.db.kind === 'postgres' ? `PostgreSQL, schema ${cfg.db.schema}` : `embedded PostgreSQL in ${cfg.db.dataDir}`,
    cfg.redisUrl ? 'Redis wake bus' : 'in-process wake bus',
    cfg.identity.mode === 'network' ? `identity network ${cfg.identity.url}` : 'local identity mode',
    cfg.secrets.adminToken ? 'admin API on' : 'admin API off (SERVER_ADMIN_TOKEN unset)',
    `authority ${cfg.authority}`,
  ].join('; ')

/** `wire migrate` and `wire check-config`: the server's own settings (DATABASE_URL, WIRE_CONFIG, …). */
export function opsCommands(io: Io): (program: Command) => void {
  return (program) => {
    program
      .command('migrate')
      .description("apply pending database migrations and exit (the Kubernetes Job; the server's DATABASE_URL, WIRE_PG_SCHEMA)")
      .action(async () => {
        const cfg = loadConfig(io.env)
        const db: Db =
          cfg.db.kind === 'postgres'
            ? postgresDb(cfg.db.directUrl, { max: 1, applicationName: 'wire-migrate' })
            : await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
        try {
          const { applied } = await migrate(db, cfg.db.schema)
          io.out(applied.length ? `applied ${applied.join(', ')} to schema ${cfg.db.schema}` : `schema ${cfg.db.schema} is up to date`)
        } catch (err) {
          const hint = cfg.db.kind === 'postgres' ? databaseHint(err, cfg.db.directUrl) : null
          throw new UsageError(`cannot migrate schema ${cfg.db.schema} of ${databaseName(cfg)}: ${hint ?? causeText(err)}`)
        } finally {
          await db.close()
        }
      })

    program
      .command('check-config')
      .description("validate the server's environment and board file without starting anything; exit 0 or 1")
      .action(async () => {
        const cfg = loadConfig(io.env)
        const file = loadBoardFile(cfg.boardFile)
        io.out(`configuration OK: ${describe(cfg)}`)
        io.out(
          file
            ? `board file ${cfg.boardFile} OK${file.name ? ` (board "${file.name}")` : ''}`
            : `no board file at ${cfg.boardFile} (a new board is named "${cfg.boardName ?? 'main'}")`,
        )
        for (const line of formatUnsetForPublicHost(cfg)) io.out(line) // a public name with ★ settings unset: named, still exit 0
      })
  }
}
