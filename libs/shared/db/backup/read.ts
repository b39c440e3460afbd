import { isDataError } from '../errors.js'
import { listMigrations, migrate } from '../migrate.js'
import { signalPartitions } from '../signals/partitions.js'
import { ident, type Db, type Ident, type Tx } from '../types.js'
import { checkFeedHead, signalRowChecker } from './check.js'
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  BackupError,
  CARRIED,
  emptyCounts,
  LOCAL_COLUMNS,
  ONE_ROW,
  type BackupCounts,
  type BackupHeader,
  type CarriedTable,
} from './format.js'

export interface RestoreOptions {
  /** What the migration runner takes: the direct URL on PostgreSQL, the Db itself on the embedded database. */
  migrateWith: string | Db
  /** The target already has signals: delete its board (signals, rules, stats) and restore over it. */
  replace: boolean
}

export interface RestoreReport {
  counts: BackupCounts
  feedHead: number
  /** Migrations the target got: up to the backup's level before the restore, the newer ones after. */
  applied: string[]
}

/** A batch of rows is inserted once it holds this many rows or this much JSON text. */
const BATCH_ROWS = 500
const BATCH_CHARS = 4 << 20

/**
 * Restores a backup (format.ts) into `schema`, read a line at a time: the target is migrated to the
 * backup's level by the project's runner, every row goes in within one transaction (a file cut
 * short, or a bad row, restores nothing), and the newer migrations run after it, as an upgrade
 * would. The feed head and change number are the source's, so every follower's cursor stays valid.
 */
export async function restoreBoardBackup(db: Db, schema: string, lines: AsyncIterable<string>, o: RestoreOptions): Promise<RestoreReport> {
  const s = ident(schema)
  const it = lines[Symbol.asyncIterator]()
  const first = await it.next()
  const header = parseHeader(first.done ? undefined : first.value)
  checkFeedHead(header.feedHead) // before any DDL, the migrations' included
  const known = listMigrations().map((m) => m.name)
  if (header.migrations.some((m, i) => known[i] !== m))
    throw new BackupError(
      `the backup was made at migration ${header.migrations.at(-1)}, which this Wire does not have: restore it with the Wire that made it (or a newer one)`,
    )
  const level = header.migrations.at(-1)
  const before = await migrate(o.migrateWith, schema, level === undefined ? {} : { until: level })
  const applied = (await db.query<{ name: string }>(`select name from ${s}.schema_migrations order by name`)).rows.map((r) => r.name)
  if (applied.length > header.migrations.length)
    throw new BackupError(
      `schema ${schema} is already at migration ${applied.at(-1)}, newer than the backup's ${level}: restore into a new schema (WIRE_PG_SCHEMA) or database; the restore upgrades it after loading`,
    )
  const { rows } = await db.query<{ head: string | number; any: boolean }>(
    `select (select seq from ${s}.feed_head) as head, exists (select 1 from ${s}.signals) as any`,
  )
  const target = rows[0]!
  if ((Number(target.head) > 0 || target.any) && !o.replace)
    throw new BackupError(
      `schema ${schema} already holds a board with signals (feed head ${target.head}): restore into an empty schema, or pass --replace to delete that board's signals, rules and stats and restore over it`,
    )
  const partitioned = await isPartitioned(db, s)

  const counts = await db.transaction(async (tx) => {
    // in the load's transaction: a refused row takes the partitions made for it back too
    if (partitioned) await signalPartitions(db, s).ensure(header.feedHead.seq, tx)
    // the tag index (migrations/0010) is derived from the signals: emptied here, rebuilt after the load
    const tagged = (await tx.query<{ t: string | null }>(`select to_regclass('${s}.signal_tags')::text as t`)).rows[0]?.t != null
    await tx.exec(`truncate ${s}.signals, ${s}.rules, ${s}.stats_buckets, ${s}.idempotency_keys${tagged ? `, ${s}.signal_tags` : ''}`)
    await tx.query(`update ${s}.feed_head set seq = $1, changes = $2`, [header.feedHead.seq, header.feedHead.changes])
    await tx.query(`update ${s}.board set fingerprint_key = $1`, [header.fingerprintKey])
    const loaded = await load(tx, s, { [Symbol.asyncIterator]: () => it }, signalRowChecker(header.feedHead.seq))
    const twice = (await tx.query<{ id: string }>(`select id from ${s}.signals group by id having count(*) > 1 limit 1`)).rows[0]
    if (twice) throw new BackupError(`signal ${twice.id} is in the backup twice: nothing was restored`)
    if (tagged)
      await tx.exec(
        `insert into ${s}.signal_tags (tag, seq) select distinct t.tag, x.seq from ${s}.signals x cross join unnest(x.tags) t(tag)`,
      )
    // the restored metadata is the board's: a board file (WIRE_CONFIG) on the target seeds only a new board
    await tx.query(`update ${s}.board set seeded_at = coalesce(seeded_at, now())`)
    return loaded
  })
  const after = await migrate(o.migrateWith, schema)
  return { counts, feedHead: header.feedHead.seq, applied: [...before.applied, ...after.applied] }
}

function parseHeader(line: string | undefined): BackupHeader {
  let h: Partial<BackupHeader> | undefined
  try {
    h = line === undefined ? undefined : (JSON.parse(line) as Partial<BackupHeader>)
  } catch {}
  if (h?.t !== 'header' || h.format !== BACKUP_FORMAT)
    throw new BackupError('not a Wire board backup (its first line is not a backup header)')
  if (h.version !== BACKUP_VERSION) throw new BackupError(`backup format version ${h.version}; this Wire reads version ${BACKUP_VERSION}`)
  const ok =
    Array.isArray(h.migrations) &&
    h.migrations.every((m) => typeof m === 'string') &&
    Number.isSafeInteger(h.feedHead?.seq) &&
    Number.isSafeInteger(h.feedHead?.changes) &&
    typeof h.fingerprintKey === 'string' &&
    h.fingerprintKey !== ''
  if (!ok) throw new BackupError('the backup header is incomplete (migrations, feedHead, fingerprintKey)')
  return h as BackupHeader
}

async function isPartitioned(db: Db, s: Ident): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(`select relkind::text as kind from pg_class where oid = to_regclass('${s}.signals')`)
  return rows[0]?.kind === 'p'
}

const COLUMN_RE = /^[a-z_][a-z0-9_]{0,62}$/

/** Every row line up to the end line, in batches; checks the end line's counts against what went in. */
async function load(
  tx: Tx,
  s: Ident,
  lines: AsyncIterable<string>,
  checkSignal: (row: Record<string, unknown>, line: number) => void,
): Promise<BackupCounts> {
  const counts = emptyCounts()
  let batch: { table: CarriedTable; rows: string[]; chars: number } | null = null
  const flush = async () => {
    if (!batch) return
    const { table, rows } = batch
    batch = null
    const r = await tx
      .query(`insert into ${s}.${table} select * from json_populate_recordset(null::${s}.${table}, $1::json)`, [`[${rows.join(',')}]`])
      .catch((err: unknown) => {
        if (!isDataError(err)) throw err
        throw new BackupError(
          `the database refused a row of ${table} before line ${n} (${String((err as Error).message).slice(0, 200)}): nothing was restored`,
        )
      })
    counts[table] += r.rowCount
  }
  let n = 1
  let end: { counts?: Partial<BackupCounts> } | undefined
  for await (const line of lines) {
    n++
    if (line.trim() === '') continue
    let x: { t?: unknown; row?: Record<string, unknown>; counts?: Partial<BackupCounts> }
    try {
      x = JSON.parse(line) as typeof x
    } catch {
      throw new BackupError(`line ${n} of the backup is not JSON: nothing was restored`)
    }
    if (x.t === 'end') {
      end = x
      break
    }
    const table = CARRIED.find((c) => c === x.t)
    if (!table || typeof x.row !== 'object' || x.row === null)
      throw new BackupError(`line ${n} of the backup is not a row of a carried table: nothing was restored`)
    if (ONE_ROW.has(table)) {
      await flush()
      const cols = Object.keys(x.row).filter((c) => !LOCAL_COLUMNS.includes(c))
      if (!cols.length || !cols.every((c) => COLUMN_RE.test(c))) throw new BackupError(`line ${n}: unexpected columns in ${table}`)
      const list = cols.map((c) => `"${c}"`).join(', ')
      await tx.query(`update ${s}.${table} set (${list}) = (select ${list} from json_populate_record(null::${s}.${table}, $1::json))`, [
        JSON.stringify(x.row),
      ])
      counts[table]++
      continue
    }
    if (table === 'signals') checkSignal(x.row, n)
    if (batch && (batch.table !== table || batch.rows.length >= BATCH_ROWS || batch.chars >= BATCH_CHARS)) await flush()
    const text = JSON.stringify(x.row)
    batch ??= { table, rows: [], chars: 0 }
    batch.rows.push(text)
    batch.chars += text.length
    if (table === 'signals' && x.row.pinned === true) counts.pinned++
  }
  await flush()
  if (!end) throw new BackupError('the backup ends before its end line (cut short?): nothing was restored')
  const said = end.counts
  const wrong = CARRIED.filter((c) => said?.[c] !== counts[c])
  if (wrong.length) throw new BackupError(`the backup's end line counts differ from its rows (${wrong.join(', ')}): nothing was restored`)
  return counts
}
