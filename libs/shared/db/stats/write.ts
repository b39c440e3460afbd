import type { Db, Ident } from '../types.js'

/** The longest window GET /sw/stats can ask for (3600 s × 120 buckets), plus an hour of slack. */
const STATS_KEEP_SECONDS = 3600 * 120 + 3600

export interface RollUpResult {
  /** Signals counted by this step. */
  counted: number
  /** The cursor after this step. */
  lastSeq: number
  /** True when the cursor reached the feed head (nothing left to count right now). */
  caughtUp: boolean
}

/** The sweeper's side of the stats tables (primary only). */
export function statsWriter(db: Db, s: Ident) {
  // @NOTE `skip locked`: a second rollup (another sweeper) finds the cursor taken and leaves; the
  // holder is counting the same rows. A blocking lock would be as correct but would queue sweepers.
  const cursorSql = `select last_seq from ${s}.stats_rollup for update skip locked`
  const headSql = `select seq from ${s}.feed_head`
  // the next `maxRows` stored seqs: seq is dense but for a failover's jump (signals/feed-head.ts),
  // which this crosses at once; every row up to the head is visible once the head says so
  const stepSql = `select count(*)::int as n, max(seq) as top
    from (select seq from ${s}.signals where seq > $1 and seq <= $2 order by seq limit $3) x`
  const addSql = `
    insert into ${s}.stats_buckets (at, origin, signals)
    select date_bin('1 minute', created_at, timestamptz 'epoch'), origin, count(*)
    from ${s}.signals where seq > $1 and seq <= $2
    group by 1, 2
    on conflict (at, origin) do update set signals = ${s}.stats_buckets.signals + excluded.signals`
  const advanceSql = `update ${s}.stats_rollup set last_seq = $1, rolled_up_at = now()`
  const pruneSql = `delete from ${s}.stats_buckets where at < now() - $1::int * interval '1 second'`

  return {
    /**
     * Counts up to `maxRows` signals past the cursor into stats_buckets and moves the cursor, in one
     * short transaction. Null when another rollup holds the cursor.
     */
    async rollUp(maxRows: number): Promise<RollUpResult | null> {
      return db.transaction(async (tx) => {
        const cur = (await tx.query<{ last_seq: string | number }>(cursorSql)).rows[0]
        if (!cur) return null
        const last = Number(cur.last_seq)
        // read after the cursor lock, in a newer snapshot (read committed): never behind another rollup's cursor
        const head = Number((await tx.query<{ seq: string | number }>(headSql)).rows[0]?.seq ?? 0)
        let upto = last
        let counted = 0
        if (head > last) {
          const step = (await tx.query<{ n: number; top: string | null }>(stepSql, [last, head, maxRows])).rows[0]!
          counted = step.n
          upto = step.n < maxRows ? head : Number(step.top)
          await tx.query(addSql, [last, upto])
          await tx.query(advanceSql, [upto])
        }
        return { counted, lastSeq: upto, caughtUp: upto >= head }
      })
    },
    /** Drops history older than any stats request can reach. */
    async prune(keepSeconds = STATS_KEEP_SECONDS): Promise<number> {
      return (await db.query(pruneSql, [keepSeconds])).rowCount
    },
  }
}
export type StatsWriter = ReturnType<typeof statsWriter>
