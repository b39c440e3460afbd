import type { Db, Ident } from '../../libs/shared/db/index.js'

// Disk per signal published (bench/day.ts): every attached partition of `signals` that the head has
// reached, and its `signal_tags` twin, split into the heap, TOAST and each index (named by the
// partitioned index it belongs to), divided by the seq values the head has passed in it. Seq values,
// not live rows: a row deleted from a closed partition leaves its space behind until the drop, so
// the bytes a published signal costs are what this counts.

export interface StorageUse {
  /** Signals published into the partitions measured. */
  signals: number
  /** Bytes per million signals, by part: `heap`, `toast`, `index <name>`, `tags heap`, `tags index`. */
  perMillion: Record<string, number>
  totalPerMillion: number
  /** stats_buckets (one row per minute and origin), whole table. */
  statsRows: number
  statsBytes: number
  /** Rows in the default partition: carried forward by drops, or inserts that outran the partitions. */
  keptRows: number
  /** idempotency_keys (a row per keyed publish of the last 24 h), whole table. */
  keysRows: number
  keysBytes: number
}

export async function storageUse(db: Db, s: Ident, head: number): Promise<StorageUse> {
  const { rows: parts } = await db.query<{ oid: number; name: string; bound: string; heap: string; toast: string }>(
    `select c.oid, c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound, pg_relation_size(c.oid) as heap,
            pg_total_relation_size(c.oid) - pg_indexes_size(c.oid) - pg_relation_size(c.oid) as toast
     from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = '${s}.signals'::regclass and c.relname <> 'signals_kept'`,
  )
  const per: Record<string, number> = {}
  const add = (k: string, n: number) => void (per[k] = (per[k] ?? 0) + n)
  let signals = 0
  for (const p of parts) {
    const m = /FROM \('?(\d+)'?\) TO \('?(\d+)'?\)/.exec(p.bound)
    if (!m) continue
    const n = Math.min(Number(m[2]), head + 1) - Number(m[1])
    if (n <= 0) continue
    signals += n
    add('heap', Number(p.heap))
    add('toast', Number(p.toast))
    const { rows: idx } = await db.query<{ parent: string | null; bytes: string }>(
      `select (select pc.relname from pg_inherits ii join pg_class pc on pc.oid = ii.inhparent where ii.inhrelid = x.indexrelid) as parent,
              pg_relation_size(x.indexrelid) as bytes
       from pg_index x where x.indrelid = $1`,
      [p.oid],
    )
    for (const i of idx) add(`index ${i.parent ?? 'id (per partition)'}`, Number(i.bytes))
    const tags = p.name.replace(/^signals_/, 'signal_tags_')
    const { rows: t } = await db.query<{ heap: string; idx: string }>(
      `select pg_relation_size(to_regclass($1)) as heap, pg_indexes_size(to_regclass($1)) as idx`,
      [`${s}."${tags}"`],
    )
    add('tags heap', Number(t[0]?.heap ?? 0))
    add('tags index', Number(t[0]?.idx ?? 0))
  }
  const perMillion = Object.fromEntries(Object.entries(per).map(([k, v]) => [k, signals ? (v * 1e6) / signals : 0]))
  const { rows: st } = await db.query<{ n: string; bytes: string; keys: string; keybytes: string; kept: string }>(
    `select (select count(*) from ${s}.stats_buckets) as n, (select count(*) from ${s}.signals_kept) as kept, pg_total_relation_size('${s}.stats_buckets') as bytes,
            (select count(*) from ${s}.idempotency_keys) as keys, pg_total_relation_size('${s}.idempotency_keys') as keybytes`,
  )
  return {
    signals,
    perMillion,
    totalPerMillion: Object.values(perMillion).reduce((a, b) => a + b, 0),
    statsRows: Number(st[0]!.n),
    statsBytes: Number(st[0]!.bytes),
    keptRows: Number(st[0]!.kept),
    keysRows: Number(st[0]!.keys),
    keysBytes: Number(st[0]!.keybytes),
  }
}
