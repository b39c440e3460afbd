import { randomFillSync } from 'node:crypto'
import { invalid } from './errors.js'
import { isSignalId } from './sw-uri.js'

/** The id's characters, [0-9A-Za-z], as bytes. */
const ALPHABET = Buffer.from('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 'latin1')

/** Random bytes drawn from the system's generator a page at a time, used once each. */
const pool = Buffer.alloc(4096)
let used = pool.length
/** The id being made, a byte a character: one string at the end instead of one a character. */
const id = Buffer.alloc(20)

/**
 * 20 characters from [0-9A-Za-z], cryptographically random (~119 bits). Each is a random byte's
 * low 6 bits, 62 and 63 drawn again, so every character is equally likely; one system call per
 * ~190 ids instead of crypto.randomInt's checks and promise-free wrapper twenty times an id.
 */
export function newSignalId(): string {
  for (let k = 0; k < id.length; ) {
    if (used === pool.length) randomFillSync(pool), (used = 0)
    const n = pool[used++]! & 63
    if (n < 62) id[k++] = ALPHABET[n]!
  }
  return id.toString('latin1')
}

/**
 * A raw id or `sw://<authority>/signals/<id>` → the id. A URI naming another board is refused:
 * this board cannot vouch for it (docs/protocol.md "Where Wire differs from the reference server").
 */
export function parseSignalRef(ref: string, authority: string): string {
  const s = ref.trim()
  if (isSignalId(s)) return s
  const m = /^sw:\/\/([^/]+)\/signals\/([^/?#]+)$/.exec(s)
  if (!m) throw invalid('not a signal id or sw:// signal URI')
  if (m[1]!.toLowerCase() !== authority) throw invalid(`signal URI names another board (${m[1]!.slice(0, 100)})`)
  if (!isSignalId(m[2]!)) throw invalid('not a signal id or sw:// signal URI')
  return m[2]!
}
