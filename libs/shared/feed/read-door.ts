import querystring from 'fast-querystring'
import type { IdentityResolver } from '../auth/index.js'
import type { Presence } from '../bus/index.js'
import { parseReadQuery, type ReadQuery } from '../domain/index.js'
import type { ClientLimits } from '../limits/index.js'
import type { Feed } from './feed.js'
import type { FeedPage } from './page.js'
import { signalJson, threadJson, type SignalSource } from './render.js'
import type { PageSink } from './waiters.js'
import { Admitting, type AdmissionDoor, type Caller } from './admission.js'

export type { Caller } from './admission.js'

/** A read whose budgets are spent: what `page` takes (only `admit` makes one). */
export interface Admission {
  readonly caller: Caller
  readonly q: ReadQuery
  /** Gives the long-poll slot back (a waiting read's). */
  readonly release?: () => void
}

/** Parsed queries kept by their text: a feed's followers all send the same one. Emptied when full. */
const QUERY_CACHE_MAX = 1024
/** Longer query texts are parsed every time: the cache holds at most QUERY_CACHE_MAX × this many characters. */
const QUERY_CACHE_TEXT_MAX = 512

/** A sink whose long-poll slot is given back before it hears the answer, whatever the outcome. */
class Releasing implements PageSink {
  private readonly release: () => void
  private readonly sink: PageSink
  constructor(release: () => void, sink: PageSink) {
    this.release = release
    this.sink = sink
  }
  page(p: FeedPage) {
    try {
      this.release()
    } finally {
      this.sink.page(p) // the answer goes out whatever the give-back did
    }
  }
  fail(err: unknown) {
    try {
      this.release()
    } finally {
      this.sink.fail(err)
    }
  }
}

export interface ReadDoorDeps {
  authority: string
  feed: Feed
  signals: SignalSource
  presence: Presence
  limits: Pick<ClientLimits, 'read' | 'openPoll' | 'readsLimited' | 'pollsLimited' | 'key' | 'takeRead' | 'takePoll' | 'givePoll'>
  /** Names a poller from its bearer token without waiting on (or failing with) the identity network. */
  identity: Pick<IdentityResolver, 'peek'>
}

/**
 * The only door to reads. Each read parses its query, spends the caller's budgets (a request; a
 * long-poll slot while it waits), touches presence, then reads: a surface cannot forget a budget,
 * and a budget added here reaches every surface at once. Refusals are WireErrors the surface encodes.
 */
export function readDoor(d: ReadDoorDeps) {
  const parsed = new Map<string, ReadQuery>()
  /** Whether a read spends a unit of the request budget here: not when the HTTP door spent this request's already. */
  const spends = (c: Caller) => d.limits.readsLimited && c.paid !== true
  const poller = (c: Caller) => d.identity.peek(c.authorization) ?? `ip:${d.limits.key(c.address)}`
  /** The budgets of a read, one await each (no promise adopted inside another's reaction). */
  const admitted = async (caller: Caller, q: ReadQuery, waits: boolean): Promise<Admission> => {
    if (spends(caller)) await d.limits.read(caller.address)
    return waits ? { caller, q, release: await d.limits.openPoll(caller.address) } : { caller, q }
  }
  /** Touches presence and reads the page into `sink`, waiting when the query says so. */
  const readPage = (caller: Caller, q: ReadQuery, sink: PageSink): void => {
    try {
      d.presence.touch(poller(caller))
    } catch (err) {
      return void sink.fail(err)
    }
    d.feed.readTo(q, q.waitMs > 0 ? caller.gone : undefined, sink) // only a wait needs to hear the client leave
  }
  const admissions: AdmissionDoor = { limits: d.limits, readPage }
  return {
    /**
     * GET /sw/signals' query (its text after `?`, or typed values as a record): invalid_request when
     * the domain refuses it. Texts are parsed once and kept frozen (waits share them).
     */
    query(raw: string | Record<string, unknown>): ReadQuery {
      if (typeof raw !== 'string') return parseReadQuery(raw, Date.now(), d.authority)
      const hit = parsed.get(raw)
      if (hit) return hit
      const q = Object.freeze(parseReadQuery(raw.length ? querystring.parse(raw) : {}, Date.now(), d.authority))
      if (q.sinceMs !== null || raw.length > QUERY_CACHE_TEXT_MAX) return q // relative to now, or long: not kept
      if (parsed.size >= QUERY_CACHE_MAX) parsed.clear()
      parsed.set(raw, q)
      return q
    },
    /**
     * The first step of a read: spends the caller's budgets (a request; a long-poll slot while it
     * waits). Resolves to the admission `page` takes; synchronous when no budget applies.
     */
    admit(caller: Caller, q: ReadQuery): Admission | Promise<Admission> {
      const waits = q.waitMs > 0 && d.limits.pollsLimited
      if (!spends(caller) && !waits) return { caller, q }
      return admitted(caller, q, waits)
    },
    /**
     * The second step: touches presence and reads the page, waiting when the query says so; the
     * answer (or the failure) goes to `sink`, once. The long-poll slot is given back on every
     * outcome (answer, deadline, client gone, shutdown, failure) before the sink hears it.
     * @NOTE no promise and no closure per waiting read: a wait is held by the sink and its waiter.
     */
    pageTo(a: Admission, sink: PageSink): void {
      readPage(a.caller, a.q, a.release ? new Releasing(a.release, sink) : sink)
    },
    /**
     * Both steps into `sink`, with no promise (the fast path, which every follower's polls take):
     * the budgets are waited on by one object (Admitting), which gives the long-poll slot back on
     * every outcome before the sink hears it. The answer may come before this returns.
     */
    readTo(caller: Caller, q: ReadQuery, sink: PageSink): void {
      const waits = q.waitMs > 0 && d.limits.pollsLimited
      const reads = spends(caller)
      if (!reads && !waits) return void readPage(caller, q, sink)
      new Admitting(admissions, caller, q, sink, reads, waits).start()
    },
    /** `pageTo` as a promise (the surfaces that are not the hot path). */
    page(a: Admission): Promise<FeedPage> {
      return new Promise((page, fail) => this.pageTo(a, { page, fail }))
    },
    /** Both steps: one page of the feed (the surfaces that are not the hot path). */
    async read(caller: Caller, q: ReadQuery): Promise<FeedPage> {
      return this.page(await this.admit(caller, q))
    },
    /** GET /sw/signals/{id}: `{signal, replies, serverNow}` as JSON text. */
    async byId(caller: Caller, ref: string): Promise<string> {
      if (spends(caller)) await d.limits.read(caller.address)
      return signalJson(d.signals, d.authority, ref)
    },
    /** GET /sw/signals/{id}/thread: `{signals}` as JSON text. */
    async thread(caller: Caller, ref: string): Promise<string> {
      if (spends(caller)) await d.limits.read(caller.address)
      return threadJson(d.signals, d.authority, ref)
    },
  }
}
export type ReadDoor = ReturnType<typeof readDoor>
