import { randomInt } from 'node:crypto'
import { invalid } from './errors.js'
import { isSignalId } from './sw-uri.js'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** 20 characters from [0-9A-Za-z], cryptographically random (~119 bits). */
export function newSignalId(): string {
  let id = ''
  for (let i = 0; i < 20; i++) id += ALPHABET[randomInt(ALPHABET.length)]
  return id
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
