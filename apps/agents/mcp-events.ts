import { ProtocolError, ProtocolErrorCode, type McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { errorBody, logFailure, toWireError } from '../../libs/shared/http/index.js'
import type { WireError } from '../../libs/shared/domain/index.js'
import type { AgentsContext } from './context.js'
import type { AgentCaller } from '../../libs/shared/http/index.js'
import { shapeSignal } from './model-read.js'
import { filterArgsShape, toReadQuery } from './read-args.js'

/**
 * The MCP Events extension (SEP-3415, experimental here), poll delivery only: `events/list` names
 * the board's signals as one event type whose arguments are the read filters, and `events/poll`
 * is a read of the feed after Wire's own cursor, through the read side's door like every other read
 * (one unit of the request budget, a long-poll slot while it waits, the same cursor promise). Two
 * additions the extension's draft does not have yet: `waitMs` long-polls (clamped like a model's
 * wait), and the cursor may be given as Wire's number as well as its text. docs/agents.md "MCP Events".
 */

/** The extension's id in `capabilities.extensions` (SEP-2133). */
const EVENTS_EXTENSION = 'io.modelcontextprotocol/events'
/** The one event type: a signal was published on this board. */
const SIGNAL_EVENT = 'signal.published'
/** How long a client that does not long-poll is asked to wait before its next poll. */
const NEXT_POLL_MS = 2000

// The extension's error codes (server range): an unknown event name, and a refused budget.
const NOT_FOUND = -32011
const RESOURCE_EXHAUSTED = -32013

/** The compact signal the read tools answer (model-read.ts): the event's `data`. */
const PAYLOAD_SCHEMA = {
  type: 'object',
  description: "A signal in the read tools' compact form: fields that say nothing (null, empty, derived) are left out.",
  properties: {
    id: { type: 'string', description: 'The signal id (also the eventId).' },
    origin: { type: 'string', description: 'The identity that published it.' },
    originName: { type: 'string', description: 'Its display name, when the board vouches for one.' },
    originVerified: { type: 'boolean', description: 'Present (false) only when the origin is not verified.' },
    type: { type: 'string', description: 'Its $type.' },
    tags: { type: 'array', items: { type: 'string' }, description: 'Its $tags, when it has any.' },
    payload: { type: 'object', description: 'Its payload, without the $type, $tags and $refId it restates.' },
    ttl: { type: 'integer', description: 'Lifetime in seconds.' },
    pinned: { type: 'boolean', description: 'Present (true) only when pinned.' },
    refId: { type: 'string', description: 'The signal it replies to, when it is a reply.' },
    createdAt: { type: 'string', format: 'date-time', description: 'When it was published (also the timestamp).' },
  },
  required: ['id', 'origin', 'type', 'payload', 'ttl', 'createdAt'],
}

const FilterArgs = z.object(filterArgsShape).strict()
const { $schema: _drop, ...INPUT_SCHEMA } = z.toJSONSchema(FilterArgs, { io: 'input' }) as Record<string, unknown>

const EVENT_TYPE = {
  name: SIGNAL_EVENT,
  title: 'A signal on this board',
  description:
    'Fires for each signal published on this board that matches the arguments (the read filters of GET /sw/signals; none: every signal). ' +
    "eventId is the signal's id, timestamp its createdAt, data the signal. The cursor is Wire's feed cursor (nextCursor): a follower that keeps it never skips a signal.",
  delivery: ['poll'],
  inputSchema: INPUT_SCHEMA,
  payloadSchema: PAYLOAD_SCHEMA,
}

/** A cursor: Wire's nextCursor, as the extension's text or as the number every other surface answers. */
const Cursor = z.union([
  z.string().regex(/^\d{1,15}$/, 'a cursor this board returned (digits)'),
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
])

const ListParams = z.looseObject({ cursor: z.string().max(1024).optional() })
const PollParams = z.looseObject({
  name: z.string().max(256),
  arguments: FilterArgs.nullable().optional(),
  cursor: Cursor.nullable().optional(),
  maxEvents: z.number().int().min(1).optional(),
  // accepted and not applied: a board's replay is bounded by what it keeps (truncated says when it fell short)
  maxAgeMs: z.number().min(0).nullable().optional(),
  waitMs: z.number().min(0).optional(),
})
type Poll = z.infer<typeof PollParams>

/**
 * Serves the extension on one request's server (mcp-tools.ts) and declares it. `maxWaitS` clamps
 * `waitMs` as read_signals' `wait` is clamped (MCP_MAX_WAIT: below MCP clients' deadlines).
 */
export function registerEvents(server: McpServer, deps: AgentsContext, caller: AgentCaller, maxWaitS: number): void {
  const low = server.server
  low.setRequestHandler('events/list', { params: ListParams }, () =>
    answering(caller, 'events/list', async () => ({ events: [EVENT_TYPE] })),
  )
  low.setRequestHandler('events/poll', { params: PollParams }, (p) =>
    answering(caller, 'events/poll', () => poll(deps, caller, p, maxWaitS)),
  )
  low.registerCapabilities({ extensions: { [EVENTS_EXTENSION]: {} } })
}

/** One poll: the signals after the cursor that match, through the read door (one read, however it is answered). */
async function poll(deps: AgentsContext, caller: AgentCaller, p: Poll, maxWaitS: number) {
  if (p.name !== SIGNAL_EVENT)
    throw new ProtocolError(NOT_FOUND, `Unknown event: this board has one event type, ${SIGNAL_EVENT} (events/list)`, { kind: 'event' })
  const filters = p.arguments ?? {}
  const side = deps.readSide
  if (p.cursor === null || p.cursor === undefined) {
    // start from now: the head, read as an unfiltered newest page the tail answers (the filters are still checked)
    side.query(toReadQuery(filters))
    const head = await side.read(caller, side.query({ limit: '1' }))
    return result([], head.nextCursor, false, false, p)
  }
  const cursor = Number(p.cursor)
  const wait = p.waitMs === undefined ? undefined : p.waitMs / 1000
  const q = side.query(toReadQuery({ ...filters, cursor, limit: p.maxEvents, wait }, maxWaitS))
  const page = await side.read(caller, q)
  const events = page.signals.map((json) => occurrence(JSON.parse(json) as Record<string, unknown>))
  // a cursor beyond the board's head comes back to the head (another board, a reset one), and a
  // stretch the board no longer keeps may have held matches: both are a possible gap
  const truncated = page.nextCursor < cursor || !(await side.signals.keepsAll(cursor, page.nextCursor))
  return result(events, page.nextCursor, truncated, page.partial === true || events.length >= q.limit, p)
}

function occurrence(s: Record<string, unknown>) {
  return { eventId: s.id as string, name: SIGNAL_EVENT, timestamp: s.createdAt as string, data: shapeSignal(s, { kind: 'compact' }) }
}

function result(events: ReturnType<typeof occurrence>[], cursor: number, truncated: boolean, hasMore: boolean, p: Poll) {
  // a long-poll paces itself: poll again at once; more waiting: at once too
  const nextPollMs = hasMore || (p.waitMs ?? 0) > 0 ? 0 : NEXT_POLL_MS
  return { events, cursor: String(cursor), truncated, hasMore, nextPollMs }
}

/** A refused poll as the JSON-RPC error the extension names, `data` the HTTP error body's (the wire code). */
async function answering<T>(caller: AgentCaller, method: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    if (err instanceof ProtocolError) throw err
    const e = toWireError(err)
    logFailure(caller.log, err, e, { method })
    throw new ProtocolError(codeOf(e), e.message, errorBody(e, true).error)
  }
}

function codeOf(e: WireError): number {
  if (e.code === 'invalid_request') return ProtocolErrorCode.InvalidParams
  if (e.code === 'rate_limited') return RESOURCE_EXHAUSTED
  return ProtocolErrorCode.InternalError
}
