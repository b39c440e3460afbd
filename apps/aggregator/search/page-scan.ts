import { LIMITS, type SignalPage } from '../../../libs/shared/domain/index.js'

/**
 * A signal's text past this many bytes is refused unparsed: eight times the largest payload leaves
 * room for any escaping of a signal within the protocol's limits, and no larger string is made.
 */
export const SIGNAL_TEXT_MAX_BYTES = 8 * LIMITS.maxPayloadBytes

/** What `each()` hands out for a signal that was not parsed: too large, or not JSON. */
export const UNPARSED = Symbol('unparsed')

const [QUOTE, BACKSLASH, COMMA, COLON] = [0x22, 0x5c, 0x2c, 0x3a]
const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY] = [0x7b, 0x7d, 0x5b, 0x5d]
const utf8 = new TextDecoder()
const bad = (at: number) => new SyntaxError(`a followed page is not JSON (at byte ${at})`)

/**
 * A followed page kept as its bytes: the places of its signals are found in one pass, without
 * making a string of the page or an object of each signal, and `each()` parses one signal at a
 * time, as it is indexed. The heap it takes is the page's bytes (counted by the follow budget)
 * and the signal at hand, not the whole page in strings and objects. `signals` is empty: a page
 * read this way is read only through `each()`.
 */
export class ScannedPage implements SignalPage {
  readonly signals: SignalPage['signals'] = []
  nextCursor = Number.NaN
  serverNow = ''
  /** The signals' start and end offsets, in pairs. */
  readonly #places: number[] = []
  readonly #bytes: Uint8Array

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes
    const b = bytes
    const ws = (i: number) => {
      while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++
      return i
    }
    const expect = (i: number, c: number) => {
      if (b[i] !== c) throw bad(i)
      return i + 1
    }
    /** The end of the string starting at i (its opening quote). */
    const string = (i: number) => {
      for (let j = i + 1; ; j++) {
        j = b.indexOf(QUOTE, j)
        if (j < 0) throw bad(i)
        let k = j - 1
        while (b[k] === BACKSLASH) k--
        if ((j - k) % 2 === 1) return j + 1 // an even number of backslashes before it: the string ends here
      }
    }
    /** The end of the value starting at i; its parts are checked when it is parsed. */
    const value = (i: number) => {
      const c = b[i]
      if (c === QUOTE) return string(i)
      if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
        let j = i
        while (j < b.length && b[j] !== COMMA && b[j] !== CLOSE_OBJECT && b[j] !== CLOSE_ARRAY && ws(j) === j) j++
        if (j === i) throw bad(i)
        return j
      }
      let depth = 0
      for (let j = i; j < b.length; j++) {
        const d = b[j]
        if (d === QUOTE) j = string(j) - 1
        else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++
        else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return j + 1
      }
      throw bad(i)
    }
    const small = (from: number, to: number): unknown => (to - from <= 256 ? JSON.parse(utf8.decode(b.subarray(from, to))) : undefined)
    let i = expect(ws(0), OPEN_OBJECT)
    for (let first = true; ; first = false) {
      i = ws(i)
      if (b[i] === CLOSE_OBJECT) break
      if (!first) i = ws(expect(i, COMMA))
      const keyEnd = string(i)
      const key = small(i, keyEnd)
      i = ws(expect(ws(keyEnd), COLON))
      if (key === 'signals') {
        i = expect(i, OPEN_ARRAY)
        for (let n = 0; ; n++) {
          i = ws(i)
          if (b[i] === CLOSE_ARRAY) break
          if (n > 0) i = ws(expect(i, COMMA))
          const end = value(i)
          this.#places.push(i, end)
          i = end
        }
        i++
        continue
      }
      const end = value(i)
      if (key === 'nextCursor') this.nextCursor = small(i, end) as number
      else if (key === 'serverNow') this.serverNow = small(i, end) as string
      i = end
    }
    if (ws(i + 1) !== b.length) throw bad(i + 1)
  }

  /**
   * Gives the page's bytes back now, not at V8's next full collection (a page indexed while young
   * collections ran is old by then): its buffer is detached, and `each()` finds nothing after.
   */
  release(): void {
    const b = this.#bytes
    this.#places.length = 0
    if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer && !b.buffer.detached)
      b.buffer.transfer(0)
  }

  /** Signals on the page. */
  get count(): number {
    return this.#places.length / 2
  }

  /** Each signal, parsed when reached; `UNPARSED` for one past SIGNAL_TEXT_MAX_BYTES or not JSON. */
  *each(): Generator<unknown, void, undefined> {
    const p = this.#places
    for (let n = 0; n < p.length; n += 2) {
      const [from, to] = [p[n]!, p[n + 1]!]
      if (to - from > SIGNAL_TEXT_MAX_BYTES) yield UNPARSED
      else {
        let v: unknown = UNPARSED
        try {
          v = JSON.parse(utf8.decode(this.#bytes.subarray(from, to)))
        } catch {}
        yield v
      }
    }
  }
}
