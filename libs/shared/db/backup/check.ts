import { isSignalId, parseEnvelope, WireError } from '../../domain/index.js'
import { BackupError } from './format.js'

/**
 * The highest feed head a backup may claim: 2^48 (10,000 publishes a second for 890 years, or
 * 65,000 failovers' jumps of 2^32). A header past it is refused before anything is done, so a
 * made-up head cannot run partition DDL (one range per million seq values) or overflow what a
 * JavaScript number holds exactly.
 */
const MAX_FEED_SEQ = 2 ** 48

/** The header's feed head and change number, before any DDL: whole numbers from 0 to MAX_FEED_SEQ. */
export function checkFeedHead(head: { seq: number; changes: number }): void {
  for (const [name, v] of [
    ['seq', head.seq],
    ['changes', head.changes],
  ] as const)
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_FEED_SEQ)
      throw new BackupError(
        `the backup header's feedHead.${name} (${v}) is not a whole number from 0 to ${MAX_FEED_SEQ}: nothing was restored`,
      )
}

const TTL_MIN = 10
const TTL_MAX = 86_400

/**
 * Checks each `signals` row of a backup, in file order, against its header and the protocol
 * before it goes in: seq a whole number above the previous row's (backups list them in seq order,
 * so seqs are unique) and at most the header's feed head, so no publish is ever numbered onto a
 * restored row; an id and a ref as this board makes them; a payload that is a signal as a publish
 * would have made it (`$type`, `$tags`, size: parseEnvelope's rules), with the row's type and tags.
 */
export function signalRowChecker(feedHead: number) {
  let last = 0
  return (row: Record<string, unknown>, line: number): void => {
    const bad = (why: string) => new BackupError(`line ${line} of the backup: ${why}: nothing was restored`)
    const seq = Number(row.seq)
    if (!Number.isSafeInteger(seq) || seq < 1) throw bad(`signal seq ${String(row.seq)} is not a positive whole number`)
    if (seq > feedHead) throw bad(`signal seq ${seq} is above the header's feed head ${feedHead}`)
    if (seq <= last) throw bad(`signal seq ${seq} does not follow ${last} (signals come once each, in seq order)`)
    last = seq
    if (typeof row.id !== 'string' || !isSignalId(row.id)) throw bad('a signal id is not 20 letters and digits')
    if (row.ref_id != null && (typeof row.ref_id !== 'string' || !isSignalId(row.ref_id)))
      throw bad(`signal ${row.id}'s ref is not a signal id`)
    if (typeof row.origin !== 'string' || row.origin === '') throw bad(`signal ${row.id} has no origin`)
    if (!Number.isInteger(row.ttl_seconds) || (row.ttl_seconds as number) < TTL_MIN || (row.ttl_seconds as number) > TTL_MAX)
      throw bad(`signal ${row.id}'s ttl_seconds is not from ${TTL_MIN} to ${TTL_MAX}`)
    if (typeof row.payload !== 'string') throw bad(`signal ${row.id} has no payload text`)
    let env: { type: string; tags: string[] }
    try {
      env = parseEnvelope(row.payload, TTL_MAX)
    } catch (err) {
      // a stored reply's payload no longer holds its $refId (the row does)
      if (!(err instanceof WireError)) throw err
      if (err.code !== 'reply_requires_ref' || row.ref_id == null)
        throw bad(`signal ${row.id}'s payload is not a signal a publish would store (${err.message})`)
      env = parseEnvelope(row.payload.replace(/^\s*\{/, '{"$refId":"0",'), TTL_MAX) // the ref's value is the row's, checked above
    }
    if (row.type !== env.type) throw bad(`signal ${row.id}'s type is not its payload's $type`)
    const tags = row.tags
    if (!Array.isArray(tags) || tags.length !== env.tags.length || tags.some((t, i) => t !== env.tags[i]))
      throw bad(`signal ${row.id}'s tags are not its payload's $tags`)
  }
}
