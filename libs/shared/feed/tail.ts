import { searchText, serializeSignal, type Signal } from '../domain/index.js'

export interface TailEntry {
  readonly signal: Signal
  /** The emitted JSON, serialised by the first read that carries it and shared by every later one. */
  readonly json: string
  /** The lower-cased text `q` searches, made by the first read with `q` and kept (searchTextOf). */
  search?: string
}

const NUL = /\u0000/

class Entry implements TailEntry {
  readonly signal: Signal
  search?: string
  #json: string | undefined
  readonly #authority: string
  constructor(signal: Signal, authority: string) {
    this.signal = signal
    this.#authority = authority
  }
  get json(): string {
    if (this.#json !== undefined) return this.#json
    const json = serializeSignal(this.signal, this.#authority)
    // @NOTE V8 holds a concatenated string as a tree of its pieces (dozens here) until something
    // reads it whole, as a regular expression does: one flat string to keep, half the memory, one
    // object for the garbage collector to trace
    NUL.test(json)
    return (this.#json = json)
  }
}

/** An entry's search text, lower-cased once for every later read with `q`. */
export const searchTextOf = (e: TailEntry) => (e.search ??= searchText(e.signal))

/**
 * What an entry may come to hold, in bytes: the payload three times over (the signal, its JSON,
 * its lower-cased search text, each made when first needed) and about half a KiB of the rest. An
 * estimate made when the entry goes in, so the bound costs no work per read.
 */
export const entryBytes = (s: Signal) => 3 * s.payloadText.length + 512

/**
 * The most recent signals in seq order. Invariant: every visible signal with
 * `from < seq <= head` is in `entries`, so a cursor ≥ `from` can be answered from memory.
 * Bounded twice: at most `capacity` entries, and at most `maxBytes` of them by `entryBytes`
 * (16 KiB payloads would otherwise make the default 5,000 entries some 240 MB); past either,
 * the oldest go and `from` moves up, so their readers go to the database.
 */
export class Tail {
  entries: TailEntry[] = []
  from = 0
  head = 0
  /** entryBytes of every entry. */
  bytes = 0
  /** Moves on every change of what the tail holds (a load, an append, a pin, an unpin, a removal, a trim): pages made from it before are stale. */
  version = 0
  private readonly authority: string
  private readonly capacity: number
  private readonly maxBytes: number
  constructor(authority: string, capacity: number, maxBytes = Infinity) {
    this.authority = authority
    this.capacity = capacity
    this.maxBytes = maxBytes
  }

  /** Load the newest signals: every one with `from < seq <= head`. */
  reset(signals: Signal[], head: number, from: number) {
    this.version++
    this.entries = signals.map((s) => this.entry(s))
    this.bytes = this.entries.reduce((n, e) => n + entryBytes(e.signal), 0)
    this.head = head
    this.from = Math.min(from, head)
    this.trim()
  }

  /** Append signals newer than head (ascending) and move head to `upTo`. */
  append(signals: readonly Signal[], upTo: number) {
    const [length, head] = [this.entries.length, this.head]
    for (const s of signals) if (s.seq > this.head) this.entries.push(this.entry(s)), (this.bytes += entryBytes(s))
    this.head = Math.max(this.head, upTo, signals.at(-1)?.seq ?? 0)
    if (this.entries.length !== length || this.head !== head) this.version++ // a refresh that found nothing changes nothing
    this.trim()
  }

  covers(cursor: number) {
    return cursor >= this.from
  }

  /** Index of the first entry with seq > cursor (binary search). */
  firstAfter(cursor: number): number {
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.entries[mid]!.signal.seq > cursor) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  /** Replace (pin, unpin) or drop (removed: null) one signal. */
  update(id: string, fresh: Signal | null) {
    const i = this.entries.findIndex((e) => e.signal.id === id)
    if (i < 0) return
    this.version++
    this.bytes -= entryBytes(this.entries[i]!.signal)
    if (fresh) (this.entries[i] = this.entry(fresh)), (this.bytes += entryBytes(fresh))
    else this.entries.splice(i, 1)
  }

  /** Serialised when first read: a signal nobody reads (a board published to faster than it is followed) costs no JSON. */
  private entry(signal: Signal): TailEntry {
    return new Entry(signal, this.authority)
  }

  private trim() {
    let extra = Math.max(0, this.entries.length - this.capacity)
    for (let i = 0; i < extra; i++) this.bytes -= entryBytes(this.entries[i]!.signal)
    while (this.bytes > this.maxBytes && extra < this.entries.length) this.bytes -= entryBytes(this.entries[extra++]!.signal)
    if (extra > 0) {
      this.from = this.entries[extra - 1]!.signal.seq
      this.entries = this.entries.slice(extra)
    }
  }
}
