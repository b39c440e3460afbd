import { createHash } from 'node:crypto'
import type { NewSignal } from '../../libs/shared/db/index.js'
import { newSignalId } from '../../libs/shared/domain/index.js'

// The signals of the simulated day (bench/day.ts), as the writer stores them: what a board's agents
// publish, in a stated mix. The clock is the feed: signal number `seq` is published at
// `start + seq / rate` simulated seconds, so simulated time moves exactly as fast as rows are stored,
// whatever this machine manages (bench/lib/day-clock.ts gives PostgreSQL the same time).

export interface DayShape {
  /** Signals per simulated day (5,000/s would be 432,000,000). */
  dayRows: number
  /** [ttl seconds, share]: what `$ttl` publishers ask for. */
  ttlMix: Array<[number, number]>
  /** One signal in this many is pinned by a moderator after it is published. */
  pinEvery: number
  /** Share of signals that reply to a recent one (`$refId`). */
  replyShare: number
  /** Distinct publishing identities. */
  origins: number
  /** Mean payload length in bytes (verbatim JSON text). */
  payloadBytes: number
  /** Share of publishes with an Idempotency-Key (the client library sends one with every publish: 1). */
  keyShare: number
}

export const DEFAULT_SHAPE: DayShape = {
  dayRows: 1_000_000,
  // the default $ttl (12 h) for most; status-like signals of an hour; a few asking for the most (24 h)
  ttlMix: [
    [3600, 0.15],
    [43_200, 0.8],
    [86_400, 0.05],
  ],
  pinEvery: 100_000,
  replyShare: 0.1,
  origins: 1000,
  payloadBytes: 400,
  keyShare: 0,
}

/** `3600:0.15,43200:0.8,86400:0.05` → the mix. */
export function parseTtlMix(text: string): Array<[number, number]> {
  const mix = text.split(',').map((p) => p.split(':').map(Number) as [number, number])
  if (!mix.length || mix.some(([ttl, w]) => !(ttl >= 10 && ttl <= 86_400 && w > 0)))
    throw new Error(`TTL_MIX: want ttl:share,… with 10 ≤ ttl ≤ 86400, got ${text}`)
  return mix
}

/** A small seeded generator (mulberry32): the same run makes the same mix. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS =
  'agent task done build deploy check status queue retry ready blocked merge review plan error fixed note result ok waiting'.split(' ')
const TYPES = ['status', 'task', 'result', 'note', 'alert']

export interface DayRows {
  /** Simulated epoch ms at which signal `seq` is published. */
  simMs(seq: number): number
  /** The next `n` signals, numbered from `firstSeq`. */
  batch(firstSeq: number, n: number): NewSignal[]
  /** Whether signal `seq` is one a moderator pins. */
  pinned(seq: number): boolean
}

export function dayRows(shape: DayShape, startMs: number, seed = 38): DayRows {
  const rnd = random(seed)
  const msPerRow = 86_400_000 / shape.dayRows
  const simMs = (seq: number) => Math.round(startMs + seq * msPerRow)
  const origins = Array.from(
    { length: shape.origins },
    (_, i) => `fp_${createHash('sha256').update(`origin ${i}`).digest('hex').slice(0, 20)}`,
  )
  const total = shape.ttlMix.reduce((a, [, w]) => a + w, 0)
  const ttl = () => {
    let r = rnd() * total
    for (const [t, w] of shape.ttlMix) if ((r -= w) <= 0) return t
    return shape.ttlMix.at(-1)![0]
  }
  const recent: string[] = [] // ids a reply may point at: the last 1,000
  const text = () => {
    const want = shape.payloadBytes * (0.5 + rnd())
    let s = ''
    while (s.length < want) s += `${WORDS[Math.floor(rnd() * WORDS.length)]} `
    return s.trim()
  }
  return {
    simMs,
    pinned: (seq) => seq % shape.pinEvery === 0,
    batch(firstSeq, n) {
      const out: NewSignal[] = []
      for (let i = 0; i < n; i++) {
        const created = simMs(firstSeq + i)
        const t = ttl()
        const type = TYPES[Math.floor(rnd() * TYPES.length)]!
        const origin = origins[Math.floor(rnd() * origins.length)]!
        const id = newSignalId()
        const refId = recent.length && rnd() < shape.replyShare ? recent[Math.floor(rnd() * recent.length)]! : null
        const tags = Array.from({ length: Math.floor(rnd() * 4) }, () => `topic-${Math.floor(rnd() * 50)}`)
        out.push({
          id,
          origin,
          originName: null,
          originUri: `sw://board.example/identities/${origin}`,
          originVerified: true,
          type,
          tags: [...new Set(tags)],
          payloadText: JSON.stringify({ $type: type, text: text() }),
          refId,
          ttl: t,
          createdAtMs: created,
          expiresAtMs: created + t * 1000,
        })
        if (recent.push(id) > 1000) recent.shift()
      }
      return out
    },
  }
}
