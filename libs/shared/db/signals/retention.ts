/**
 * The one retention rule: what survives a purge.
 *
 * A signal stays readable until `grace` seconds (SIGNAL_SWEEP_GRACE_SECONDS) after it expired, or
 * after a moderator removed it; a pinned signal never expires. Past that it is gone for every
 * reader whether or not the sweeper has deleted the row yet, so when the sweep runs never shows.
 * The sweeper deletes exactly the rows this rule no longer keeps, and never any row younger than
 * PURGE_FLOOR_SECONDS (the unverified thread limit still counts it). The row purge (purge.ts), the
 * partition drop's carry-forward (partition-drop.ts), by-id and thread reads (read.ts) and feed
 * pages (page.ts) all take their SQL from here; the in-memory twin is the domain's `survivesGrace`.
 *
 * `grace` and `now` are SQL expressions (a parameter such as `$1::int`, `now()`).
 */

/** Nothing younger than this is ever purged: the unverified thread limit counts the last 24 h (threadsInLastDay). */
export const PURGE_FLOOR_SECONDS = 86_400

/** The default partition of `signals`: rows carried forward out of dropped partitions (signals/partitions.ts). */
export const KEPT_PARTITION = 'signals_kept'

const cutoff = (grace: string, now: string) => `${now} - ${grace} * interval '1 second'`

/** Not expired at `at` (pinned signals never expire): a reader's page passes `now`, or `now` less the grace with includeExpired. */
export const unexpiredAt = (x: string, at: string) => `(${x}pinned or ${x}expires_at > ${at})`

/** Not expired past the grace. */
const withinExpiry = (x: string, grace: string, now = 'now()') => unexpiredAt(x, cutoff(grace, now))

/** Not removed past the grace. */
const withinRemoval = (x: string, grace: string, now = 'now()') => `(${x}removed_at is null or ${x}removed_at > ${cutoff(grace, now)})`

/** A row a reader may still see: the rule above. `x` is a table alias with its dot (`x.`) or ''. */
export const kept = (x: string, grace: string, now = 'now()') => `${withinExpiry(x, grace, now)} and ${withinRemoval(x, grace, now)}`

/**
 * What the row purge deletes, as two index-friendly halves (the partial expires_at index, the
 * removed_at index): the complement of `kept`, each past the purge floor (added by purge.ts).
 */
export const purgeable = {
  expired: (grace: string) => `not pinned and expires_at < ${cutoff(grace, 'now()')}`,
  removed: (grace: string) => `removed_at < ${cutoff(grace, 'now()')}`,
}

/** The seqs of a table's pinned rows that are not removed past the grace: kept for good, however old. */
export const pinnedKeptSeqsSql = (table: string, grace: string): string =>
  `select seq from ${table} where pinned and ${withinRemoval('', grace)}`

/**
 * The seqs of a table's rows a partition drop must carry forward: exactly those the row purge would
 * not delete, as a union of three index scans (created_at, the pinned and the unpinned expires_at
 * indexes). With `limit`, each scan stops after that many rows: the union then holds at least
 * `limit` rows exactly when the whole one would, and is exact below it, so asking "more than N?"
 * reads at most 3 × (N + 1) index entries however many rows a partition keeps. (@NOTE a plain UNION
 * under a LIMIT does not stop early: its de-duplication reads every input row first, the whole
 * partition while it is younger than the 24 h floor; measured by bench/day.ts.)
 */
export function keptSeqsSql(table: string, grace: string, limit?: number): string {
  const live = withinRemoval('', grace)
  const cap = limit === undefined ? '' : ` limit ${Math.trunc(limit)}`
  return [
    `select seq from ${table} where created_at >= now() - ${PURGE_FLOOR_SECONDS} * interval '1 second'`,
    pinnedKeptSeqsSql(table, grace),
    `select seq from ${table} where not pinned and expires_at >= ${cutoff(grace, 'now()')} and ${live}`,
  ]
    .map((q) => `(${q}${cap})`)
    .join(' union ')
}
