import type { Signal } from '../../domain/index.js'
import type { Db, Ident, Queryable } from '../types.js'
import { takeFromHead } from './feed-head.js'
import { signalPartitions } from './partitions.js'
import { signalColumns, toSignal, type SignalRow } from './row.js'

/** A signal ready to insert: everything but its seq. */
export type NewSignal = Omit<Signal, 'seq' | 'pinned'>

/**
 * The batch travels as one JSON text, each signal an object with NewSignal's keys, read back by
 * json_to_recordset with these types: one string, where pg would build twelve array literals
 * element by element (a third of the insert's CPU in this process). The payload goes as the JSON
 * it is, in a `json` column, which json_to_recordset reproduces exactly (whitespace and key order
 * kept): not escaped into a string here to be unescaped there.
 */
const COLUMNS: Record<keyof NewSignal, string> = {
  id: 'text',
  origin: 'text',
  originName: 'text',
  originUri: 'text',
  originVerified: 'bool',
  type: 'text',
  tags: 'text[]',
  payloadText: 'json',
  refId: 'text',
  ttl: 'int',
  createdAtMs: 'int8',
  expiresAtMs: 'int8',
}
const keys = Object.keys(COLUMNS) as Array<keyof NewSignal>
const str = JSON.stringify
/** One signal as COLUMNS reads it; its payload text is JSON already (envelope.ts made it from a parsed body). `more`: members after them (`,"name":value`). */
const signalJson = (x: NewSignal, more = '') =>
  `{"id":${str(x.id)},"origin":${str(x.origin)},"originName":${str(x.originName)},"originUri":${str(x.originUri)},` +
  `"originVerified":${x.originVerified},"type":${str(x.type)},"tags":${str(x.tags)},"payloadText":${x.payloadText},` +
  `"ttl":${x.ttl},"refId":${str(x.refId)},"createdAtMs":${x.createdAtMs},"expiresAtMs":${x.expiresAtMs}${more}}`
const batchParams = (batch: readonly NewSignal[]) => [batch.length, `[${batch.map((x) => signalJson(x)).join(',')}]`]

/**
 * The batch's signals with their seqs: the statement numbers the batch's i-th signal (0-based)
 * `head - batch.length + i + 1`, so it returns only the new head, not a row per signal.
 */
const withSeqs = (batch: readonly NewSignal[], head: string | number): Signal[] => {
  const first = Number(head) - batch.length + 1
  return batch.map((x, i) => ({ ...x, seq: first + i, pinned: false }))
}

/** The write side of the signals table (primary only). */
export function signalWriter(db: Db, s: Ident) {
  // @NOTE one statement takes the block of seqs and inserts the batch with its tag rows
  // (migrations/0008), and answers the new head alone (PostgreSQL runs every data-modifying CTE to
  // completion whether or not the final select reads it); the feed_head row lock is
  // held to commit, so batches commit in seq order (the feed invariant). The head is read as a
  // scalar, never joined: a join with feed_head's (unanalysed) row estimate made the planner
  // expect ~10^6 rows and JIT-compile every batch (360 ms for 500 signals). After a failover the
  // first statement moves the head past anything the lost primary could have served (feed-head.ts).
  // the batch as rows (u: NewSignal's columns, then its Idempotency-Key when `withKey`, then its 1-based place `ord`)
  const batchRows = (withKey: boolean) =>
    `rows from (json_to_recordset($2::json) as (${keys.map((k) => `"${k}" ${COLUMNS[k]}`).join(', ')}${withKey ? ', "key" text' : ''}))
         with ordinality as u(${keys.map((k) => `"${k}"`).join(', ')}${withKey ? ', "key"' : ''}, ord)`
  // the signals of `from` (a source of u rows), each at its place's seq, and their tag rows
  const insertSignals = (from: string) => `ins as (
    insert into ${s}.signals (seq, id, origin, origin_name, origin_uri, origin_verified, type, tags, payload,
                              ref_id, ttl_seconds, created_at, expires_at)
    select (select seq from head) - $1 + u.ord, u."id", u."origin", u."originName", u."originUri", u."originVerified", u."type",
           u."tags", u."payloadText"::text, u."refId", u."ttl",
           timestamptz 'epoch' + u."createdAtMs" * interval '1 millisecond',
           timestamptz 'epoch' + u."expiresAtMs" * interval '1 millisecond'
    from ${from}
    returning seq, tags),
    tagged as (insert into ${s}.signal_tags (tag, seq) select distinct t.tag, ins.seq from ins cross join unnest(ins.tags) t(tag))`
  const insertBatchSql = `with ${takeFromHead(s, 'head', '$1', '0')}, ${insertSignals(batchRows(false))} select seq from head`
  // @NOTE a batch with Idempotency-Keys: each key is stored with its signal, in the same statement
  // (one transaction): a new key costs no statement of its own. The keys go in after the head is
  // taken (the join with it), so every statement that stores keys holds feed_head first and none
  // waits for a key while another waits for feed_head. A key already held (a retry racing its
  // original, a dead or unfinished reservation) stores nothing for its signal, whose seq is left
  // unused: the caller answers it through the reservation (publish/idempotency.ts).
  const insertKeyedBatchSql = `
    with ${takeFromHead(s, 'head', '$1', '0')},
    u as (select * from ${batchRows(true)}),
    keyed as (insert into ${s}.idempotency_keys (identity, key, signal_id)
      select u."origin", u."key", u."id" from u cross join head where u."key" is not null
      on conflict (identity, key) do nothing returning signal_id),
    ${insertSignals(`u where u."key" is null or u."id" in (select signal_id from keyed)`)}
    select seq, array(select signal_id from keyed) as keyed from head`
  const threadsSinceSql = `select count(*)::int as n from ${s}.signals where origin = $1 and ref_id is null and created_at > now() - interval '24 hours'`
  // every pin, unpin and removal takes the next change number (0004_signal_changes.sql)
  const change = `with ${takeFromHead(s, 'c', '0', '1')}`
  const setPinnedSql = `${change} update ${s}.signals set pinned = $2, changed = (select changes from c)
    where id = $1 and removed_at is null returning ${signalColumns()}`
  const removeSql = `${change} update ${s}.signals set removed_at = now(), changed = (select changes from c)
    where id = $1 and removed_at is null returning id`

  // @NOTE partitions ahead of the head: once a batch's seq passes `recheckAt` (half the last
  // partition's width before its end), the next partition is made off the publish path. The
  // sweeper does the same every run; an insert that still outran both lands in the default
  // partition (migrations/0007), so no publish ever fails for want of a partition. A failure is
  // retried by the next batch (recheckAt stays where it was).
  const partitions = signalPartitions(db, s)
  let recheckAt = 0
  let ensuring = false
  const watch = (top: number) => {
    if (top < recheckAt || ensuring) return
    ensuring = true
    partitions
      .ensure(top)
      .then((r) => void (recheckAt = r.recheckAt))
      .catch(() => {})
      .finally(() => void (ensuring = false))
  }

  return {
    /** Inserts a batch atomically; returns the signals with their seqs, in order. */
    async insertBatch(batch: readonly NewSignal[]): Promise<Signal[]> {
      // one statement is one transaction: a single round trip per batch
      // @NOTE the batch's text is let go of as soon as the statement is answered: pg's query object
      // and this function's frame still hold the parameters, and when the collector has already
      // moved them to the old generation (which young collections do not look through), the text
      // they point to survived every young collection until the next full one: most of what the
      // writer promoted (bench/results/instructions-39-publish.md, "What a young collection keeps")
      const params = batchParams(batch)
      const { rows } = await db.query<{ seq: string }>(insertBatchSql, params).finally(() => void (params[1] = ''))
      const out = withSeqs(batch, rows[0]!.seq)
      watch(out.at(-1)?.seq ?? 0)
      return out
    },
    /**
     * Inserts a batch whose publishes carry Idempotency-Keys (`idem[i]`, or null), each key stored with
     * its signal. The i-th result is the signal with its seq, or null where the key was already held
     * and nothing was stored for it.
     */
    async insertKeyedBatch(batch: readonly NewSignal[], idem: ReadonlyArray<string | null>): Promise<Array<Signal | null>> {
      const params = [batch.length, `[${batch.map((x, i) => signalJson(x, `,"key":${str(idem[i])}`)).join(',')}]`]
      const { rows } = await db.query<{ seq: string; keyed: string[] }>(insertKeyedBatchSql, params).finally(() => void (params[1] = ''))
      const stored = new Set(rows[0]!.keyed)
      const out = withSeqs(batch, rows[0]!.seq).map((x, i) => (idem[i] === null || stored.has(x.id) ? x : null))
      watch(Number(rows[0]!.seq))
      return out
    },
    /**
     * Opens a thread for an origin allowed `limit` threads per 24 h, atomically across writers: a
     * transaction-scoped advisory lock per origin covers the count and the insert, so K writers
     * racing still allow `limit`. Null when the origin is at its limit (nothing stored).
     */
    async insertLimitedThread(x: NewSignal, limit: number): Promise<Signal | null> {
      return db
        .transaction(async (tx) => {
          await tx.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [`wire:${s}:threads:${x.origin}`])
          const n = (await tx.query<{ n: number }>(threadsSinceSql, [x.origin])).rows[0]?.n ?? 0
          if (n >= limit) return null
          const r = await tx.query<{ seq: string }>(insertBatchSql, batchParams([x]))
          return withSeqs([x], r.rows[0]!.seq)[0]!
        })
        .then((x) => (x && watch(x.seq), x))
    },
    async setPinned(id: string, pinned: boolean, q: Queryable = db): Promise<Signal | null> {
      const { rows } = await q.query<SignalRow>(setPinnedSql, [id, pinned])
      return rows[0] ? toSignal(rows[0]) : null
    },
    async remove(id: string): Promise<boolean> {
      return (await db.query(removeSql, [id])).rowCount > 0
    },
  }
}
export type SignalWriter = ReturnType<typeof signalWriter>
