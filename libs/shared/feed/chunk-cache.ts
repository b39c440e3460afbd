import type { SeqChunk } from '../db/index.js'
import type { ReadQuery } from '../domain/index.js'
import type { FeedPage } from './page.js'
import type { Tail } from './tail.js'
import { tailNewestMatches, tailPage } from './tail-pages.js'
import { indexTags, tagPositions, type TagIndex } from './chunk-tags.js'

/** Seqs in one chunk: chunk k holds the signals with k·CHUNK_SEQS < seq <= (k+1)·CHUNK_SEQS. */
export const CHUNK_SEQS = 1024
/** Chunk loads in flight at once (each is one statement; a miss never waits on one). */
const MAX_LOADS = 2
/** The chunk at the head is read again once the head is this far past it (newest pages match what is above it one by one, in the tail). */
const TOP_LAG = 128

interface Held {
  /** Every signal with k·CHUNK_SEQS < seq <= top is here: top is the chunk's end, or the head it was read at if lower. */
  top: number
  seqs: Float64Array
  expires: Float64Array
  /**
   * Every signal's JSON, one after the other, in one string: signal p is text[ends[p - 1], ends[p]).
   * One large object per chunk rather than a thousand small ones among the old generation's other
   * objects: held compactly, and freed whole when the chunk goes (docs/architecture.md, "The chunk cache").
   */
  text: string
  ends: Uint32Array
  tags: TagIndex
  bytes: number
  used: number
}

/** What the tail reflects (TailSync): its change number and failover epoch, and the highest head known. */
export interface TailState {
  readonly changesSeen: number
  readonly epochSeen: number
  readonly knownHead: number
}

type Query = Pick<ReadQuery, 'limit' | 'tags' | 'type' | 'origin' | 'q' | 'sinceMs' | 'includeExpired' | 'refId'>

/** What a chunk may hold in memory, by estimate: its JSON texts (two bytes a character past Latin-1), its tag index, its arrays. */
function chunkBytes(c: SeqChunk, tags: TagIndex): number {
  let n = 256 + 20 * c.seqs.length + 2 * tags.pos.length
  // one character past Latin-1 makes the chunk's whole text two bytes a character
  n += /[^\x00-\xff]/.test(c.text) ? 2 * c.text.length : c.text.length
  for (const tag of tags.ids.keys()) n += 56 + 2 * tag.length
  return n
}

/** Signal `p` of a chunk: a slice of its text (no copy). */
const json = (c: Held, p: number) => c.text.slice(p === 0 ? 0 : c.ends[p - 1], c.ends[p])

/**
 * The signals of aligned seq ranges at or below the head, kept in the reader after a read below
 * the tail asked for them, so that reads far behind the head (unfiltered, or by tags: the filters
 * whose `sources.chunks` in READ_FILTERS says so, which is when the feed asks it) are answered
 * from memory. docs/architecture.md, "The chunk cache".
 *
 * @NOTE honest because a chunk is read in one snapshot and holds its range only up to that
 * snapshot's head (every seq up to the head is visible in a snapshot that sees the head), and below the head a
 * signal changes only by a pin, an unpin, a removal, expiry or a failover: pins, unpins and
 * removals move the board's change number and send an invalidation, a failover moves the epoch,
 * and expiry is applied to each signal at every read. A chunk is kept only when its snapshot's
 * change number and epoch are the ones the tail reflects and no invalidation came while it was
 * read; any later change empties the cache. So an answer from it is what the tail would answer,
 * to the tail's own consistency. Bounded by bytes (READER_CHUNK_CACHE_MAX_BYTES), least recently
 * used chunks going first.
 */
export class ChunkCache {
  private readonly chunks = new Map<number, Held>()
  private readonly loading = new Set<number>()
  private bytes = 0
  private tick = 0
  /** Bumped by every invalidation: a chunk read across one is not kept. */
  private gen = 0
  /** The change number and epoch what is held was read at (read against the tail's on every use). */
  private changes = -1
  private epoch = -1
  private readonly maxBytes: number
  private readonly load: (lo: number, hi: number) => Promise<SeqChunk>
  private readonly tail: TailState
  /** A chunk came back with a change number or epoch the tail has not seen yet: the tail should look. */
  private readonly behind: () => void

  constructor(maxBytes: number, load: (lo: number, hi: number) => Promise<SeqChunk>, tail: TailState, behind: () => void) {
    this.maxBytes = maxBytes
    this.load = load
    this.tail = tail
    this.behind = behind
  }

  /** A pin, an unpin or a removal: nothing kept so far may be served again. */
  invalidate() {
    this.gen++
    this.clear()
  }

  /** Matches after `cursor`, from chunks and then the tail; null when a chunk on the way is not held (it is asked for). */
  after(q: Query, cursor: number, tail: Tail, nowMs: number, graceMs: number): FeedPage | null {
    this.align()
    const cutoff = q.includeExpired ? nowMs - graceMs : nowMs
    const signals: string[] = []
    let last = cursor
    for (let k = Math.floor(cursor / CHUNK_SEQS); ; k++) {
      const c = this.chunks.get(k)
      // the rest from the tail, when it reaches back to where the chunks end (every seq up to there was looked at)
      const lo = k * CHUNK_SEQS
      if (c === undefined) return lo >= cursor && tail.covers(lo) ? withTail(signals, tail, q, lo, nowMs, graceMs) : this.want(k)
      c.used = ++this.tick
      const at = this.positions(c, q.tags)
      for (let i = 0, n = at?.length ?? c.seqs.length; i < n; i++) {
        const p = at ? at[i]! : i
        if (c.seqs[p]! <= cursor || c.expires[p]! <= cutoff) continue
        signals.push(json(c, p))
        last = c.seqs[p]!
        if (signals.length === q.limit) return { signals, nextCursor: last }
      }
      if (c.top < lo + CHUNK_SEQS)
        return c.top >= cursor && tail.covers(c.top) ? withTail(signals, tail, q, c.top, nowMs, graceMs) : this.want(k)
    }
  }

  /**
   * The newest page: the tail's signals above the highest chunk that reaches into it, then the
   * chunks down from there; null when one on the way is not held (it is asked for). A page the
   * tail's newest fill (a dense filter) asks for nothing; for the others the chunk at the head is
   * kept within TOP_LAG of it, so only the tail's newest few are matched one by one.
   */
  newest(q: Query, tail: Tail, nowMs: number, graceMs: number): FeedPage | null {
    this.align()
    const cutoff = q.includeExpired ? nowMs - graceMs : nowMs
    const atHead = Math.floor(Math.max(tail.head - 1, 0) / CHUNK_SEQS)
    // `bound`: the tail gives the signals above it, the chunks those at or below it
    let k = Math.floor((tail.from - 1) / CHUNK_SEQS) // the chunk holding tail.from, unless a higher one reaches into the tail
    let bound = tail.from
    for (let j = atHead; (j + 1) * CHUNK_SEQS > tail.from; j--) {
      const top = this.chunks.get(j)?.top ?? -1
      if (top >= tail.from) {
        ;[k, bound] = [j, Math.min(top, tail.head)]
        break
      }
    }
    const signals = tailNewestMatches(tail, q, nowMs, graceMs, bound) // newest first
    // a page the tail's newest did not fill: the chunk at the head, in the background, so the next one matches fewer one by one
    if (signals.length < q.limit && tail.head - bound > TOP_LAG) this.want(atHead)
    for (; k >= 0 && bound > 0 && signals.length < q.limit; k--) {
      const c = this.chunks.get(k)
      if (c === undefined || c.top < Math.min(bound, (k + 1) * CHUNK_SEQS)) return this.want(k) // not held, or read before the head got this far
      c.used = ++this.tick
      const at = this.positions(c, q.tags)
      for (let i = (at?.length ?? c.seqs.length) - 1; i >= 0 && signals.length < q.limit; i--) {
        const p = at ? at[i]! : i
        if (c.seqs[p]! <= bound && c.expires[p]! > cutoff) signals.push(json(c, p))
      }
    }
    return { signals: signals.reverse(), nextCursor: tail.head }
  }

  /** The positions of a chunk's signals carrying any of `tags`, ascending (null for no tags: every position). */
  private positions(c: Held, tags: readonly string[]): ArrayLike<number> | null {
    if (tags.length === 0) return null
    const of = (t: string) => tagPositions(c.tags, t)
    if (tags.length === 1) return of(tags[0]!)
    const union = new Set<number>()
    for (const t of tags) for (const p of of(t)) union.add(p)
    return [...union].sort((a, b) => a - b)
  }

  /** Drops what is held when the tail has since seen a pin, an unpin, a removal or a failover. */
  private align() {
    const t = this.tail
    if (t.changesSeen !== this.changes || t.epochSeen !== this.epoch)
      this.clear(), (this.changes = t.changesSeen), (this.epoch = t.epochSeen)
  }

  /** Asks for chunk k in the background (a bounded number at once); the read goes to the database meanwhile. */
  private want(k: number): null {
    const lo = k * CHUNK_SEQS
    const hi = lo + CHUNK_SEQS
    if (this.loading.size >= MAX_LOADS || this.loading.has(k) || lo >= this.tail.knownHead) return null
    const gen = this.gen
    this.loading.add(k)
    this.load(lo, hi)
      .then(
        (c) => this.keep(k, c, gen),
        () => {},
      ) // a failed load is asked for again by the next read that misses it
      .finally(() => this.loading.delete(k))
    return null
  }

  private keep(k: number, c: SeqChunk, gen: number) {
    const top = Math.min((k + 1) * CHUNK_SEQS, c.head)
    // read with what the tail reflects, and no invalidation since; reaching higher than the copy held (if any)
    if (gen !== this.gen || top <= k * CHUNK_SEQS || (this.chunks.get(k)?.top ?? 0) >= top) return
    if (c.changes !== this.tail.changesSeen || c.epoch !== this.tail.epochSeen) return this.behind() // the tail has news to take in first
    this.align()
    const tags = indexTags(c.tags)
    const bytes = chunkBytes(c, tags)
    if (bytes > this.maxBytes) return
    this.drop(k)
    this.chunks.set(k, {
      top,
      seqs: Float64Array.from(c.seqs),
      expires: Float64Array.from(c.expires),
      text: c.text,
      ends: c.ends,
      tags,
      bytes,
      used: ++this.tick,
    })
    this.bytes += bytes
    while (this.bytes > this.maxBytes) this.evictOne()
  }

  private evictOne() {
    let oldest: [number, Held] | null = null
    for (const e of this.chunks) if (oldest === null || e[1].used < oldest[1].used) oldest = e
    this.drop(oldest![0])
  }

  private drop(k: number) {
    this.bytes -= this.chunks.get(k)?.bytes ?? 0
    this.chunks.delete(k)
  }

  private clear() {
    this.chunks.clear()
    this.bytes = 0
  }
}

/** `signals` from chunks, then the tail's matches after `from` (every seq up to `from` was looked at). */
function withTail(signals: string[], tail: Tail, q: Query, from: number, nowMs: number, graceMs: number): FeedPage {
  const rest = tailPage(tail, { ...q, limit: q.limit - signals.length }, from, nowMs, graceMs)!
  return { signals: signals.length ? signals.concat(rest.signals) : rest.signals, nextCursor: rest.nextCursor }
}
