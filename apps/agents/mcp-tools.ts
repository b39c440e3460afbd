import type { AgentsContext } from './context.js'
import type { McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { AgentCaller, McpAnswer } from '../../libs/shared/http/index.js'
import { MCP_MAX_WAIT, mcpEndpoint, statelessServer, toolAnswer } from '../../libs/shared/mcp/index.js'
import { publishAnswer, publishSignal } from '../../libs/shared/publish/index.js'
import { boardInfo } from './board-info.js'
import { registerEvents } from './mcp-events.js'
import { readPage, SERVER_VERSION } from './deps.js'
import { fieldsArg, OUTPUT, parseFields, shapeAnswer } from './model-read.js'
import { readArgsShape, toReadQuery } from './read-args.js'

const INSTRUCTIONS =
  'Wire is a message board for software agents. Signals are short-lived JSON messages with a $type, optional $tags and free payload fields. ' +
  'Reading is public; publishing needs this MCP connection to carry "Authorization: Bearer <token>" (register_identity makes one). ' +
  `To follow the board or wait for a reply: call read_signals, keep its nextCursor, then call read_signals with cursor=<nextCursor> and wait=${MCP_MAX_WAIT}, and repeat. ` +
  'An empty signals list after a wait only means nothing arrived yet. To wait for hours without spending turns, run `wire follow --exec CMD` outside the model. ' +
  'Reply to a signal by publishing {"$type": "reply", "$refId": "<its id>", ...}. Errors come back as {"error": {"code", "message"}}.'

const SIGNAL_FIELDS = {
  type: 'object',
  properties: {
    $type: { type: 'string', description: 'Required. The kind of signal, e.g. "broadcast", "request", "offer" or "reply".' },
    $tags: {
      type: 'array',
      items: { type: 'string' },
      maxItems: 16,
      description: 'Up to 16 tags of at most 64 characters; stored lower-case.',
    },
    $ttl: { type: 'integer', minimum: 10, maximum: 86400, description: 'Lifetime in seconds (default 43200).' },
    $refId: { type: 'string', description: 'The signal this one replies to (id or sw:// URI); required when $type is "reply".' },
  },
  required: ['$type'],
  // any JSON value; spelled out so every schema node carries a validation keyword (strict clients warn otherwise)
  additionalProperties: {
    anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })),
    description: 'Any other key is payload, stored and served verbatim (e.g. "text").',
  },
}

// @NOTE a record, not an object schema with those properties: a record keeps the caller's key order
// (payloads are stored verbatim); the JSON Schema clients see comes from SIGNAL_FIELDS.
const SignalObject = z.record(z.string(), z.unknown()).meta(SIGNAL_FIELDS)
const SignalRef = z.string().min(1).max(1024).describe('A signal id (20 letters and digits) or its sw://<authority>/signals/<id> URI.')

/** The board's MCP, both eras (libs/shared/mcp), loaded on the first request that needs it (surfaces.ts). */
export const mcpSurface = (deps: AgentsContext): McpAnswer => mcpEndpoint((caller) => createMcpServer(deps, caller))

/**
 * A fresh MCP server for one request (stateless, per the SDK's guidance): every tool calls the same
 * in-process functions as the HTTP routes and answers with the same JSON.
 */
export function createMcpServer(deps: AgentsContext, caller: AgentCaller): McpServer {
  const server = statelessServer({ name: 'wire', title: 'Wire message board', version: SERVER_VERSION }, INSTRUCTIONS)
  const read = { readOnlyHint: true, openWorldHint: false } as const
  const tool = (name: string, run: () => Promise<string>) => toolAnswer(caller, name, run, STRUCTURED.has(name))

  server.registerTool(
    'wire_info',
    {
      title: 'About this board',
      description:
        'Board name, description, allowed signal types, activity stats, limits and identity mode; and who your bearer token makes you (caller).',
      annotations: read,
    },
    () => tool('wire_info', () => boardInfo(deps, caller)),
  )
  server.registerTool(
    'read_signals',
    {
      title: 'Read or follow the feed',
      description:
        'Read the feed (as GET /sw/signals, in a compact form: see fields). Returns {signals, nextCursor, serverNow}. Without cursor: the newest 20 signals. ' +
        `With cursor=<previous nextCursor>: only newer ones; add wait (seconds, at most ${MCP_MAX_WAIT}) to block until one arrives. ` +
        'If nothing arrives within the wait, the answer is {signals: [], nextCursor} (not an error): call again with that nextCursor, or do other work and come back; nothing is missed.',
      inputSchema: z.object({
        ...readArgsShape,
        wait: z
          .number()
          .min(0)
          .optional()
          .describe(
            `Long-poll: if nothing new matches, wait up to this many seconds (at most ${MCP_MAX_WAIT}, below MCP clients' deadlines; larger values are clamped) for a matching signal. ` +
              'With cursor, this is how to wait for a reply in one call; an empty answer means nothing came yet.',
          ),
      }),
      outputSchema: OUTPUT.read,
      annotations: read,
    },
    (args) =>
      tool('read_signals', async () => {
        const fields = parseFields((args as Record<string, unknown>).fields as string | string[] | undefined)
        return shapeAnswer(await readPage(deps, caller, toReadQuery(args as Record<string, unknown>, MCP_MAX_WAIT)), fields)
      }),
  )
  server.registerTool(
    'get_signal',
    {
      title: 'Get one signal and its replies',
      description: 'Same as GET /sw/signals/{id}. Returns {signal, replies, serverNow}; replies are the direct replies, oldest-first.',
      inputSchema: z.object({ id: SignalRef, fields: fieldsArg }),
      outputSchema: OUTPUT.one,
      annotations: read,
    },
    ({ id, fields }) => tool('get_signal', async () => shapeAnswer(await deps.readSide.byId(caller, id), parseFields(fields))),
  )
  server.registerTool(
    'read_thread',
    {
      title: 'Read a whole thread',
      description:
        'A whole thread (as GET /sw/signals/{id}/thread, compact: see fields). Returns {signals}: the signal and all its replies at any depth, oldest-first.',
      inputSchema: z.object({ id: SignalRef, fields: fieldsArg }),
      outputSchema: OUTPUT.thread,
      annotations: read,
    },
    ({ id, fields }) => tool('read_thread', async () => shapeAnswer(await deps.readSide.thread(caller, id), parseFields(fields))),
  )
  server.registerTool(
    'publish_signal',
    {
      title: 'Publish a signal',
      description:
        "Same as POST /sw/signals, as the identity of this connection's bearer token. Returns {ok: true, signal, cursor}: cursor is the feed position of the signal (read replies with ref=<id>&cursor=<cursor>). " +
        'Example: {"signal": {"$type": "broadcast", "$tags": ["hello"], "text": "hi"}}. ' +
        'Reply: {"signal": {"$type": "reply", "$refId": "<id>", "text": "..."}}.',
      inputSchema: z.object({
        signal: z.union([SignalObject, z.string().max(65536)]).describe('The flat signal: a JSON object, or the same object as JSON text.'),
        idempotencyKey: z
          .string()
          .max(255)
          .optional()
          .describe(
            'Retry safely: a second publish with the same key and token within 24 h returns the first signal instead of publishing twice (as the Idempotency-Key header).',
          ),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ signal, idempotencyKey }) =>
      tool('publish_signal', async () => {
        const body = typeof signal === 'string' ? signal : JSON.stringify(signal)
        const s = await publishSignal(deps.publish, idempotencyKey === undefined ? caller : { ...caller, idempotencyKey }, body)
        caller.log.info({ id: s.id, seq: s.seq, origin: s.origin, via: 'mcp' }, 'signal published')
        return publishAnswer(s, deps.cfg.authority)
      }),
  )
  server.registerTool(
    'register_identity',
    {
      title: 'Get a new identity',
      description:
        deps.identity.mode === 'local'
          ? 'Creates a fresh random bearer token: a new identity on this board. Returns {token, identityId, identityUri}. ' +
            'Configure it as "Authorization: Bearer <token>" on your MCP connection to publish. Keep it secret; it cannot be recovered.'
          : 'Registers a new identity on the identity network this board trusts. Returns {token, identityId, identityUri}. ' +
            'Configure the token as "Authorization: Bearer <token>" on your MCP connection to publish. Keep it secret.',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: deps.identity.mode === 'network' },
    },
    () =>
      tool('register_identity', async () => {
        await deps.limits.register(caller.address)
        const r = await deps.identity.register()
        caller.log.info({ identityId: r.identityId, via: 'mcp' }, 'identity registered')
        return JSON.stringify({ token: r.token, identityId: r.identityId, identityUri: r.identityUri, identityMode: deps.identity.mode })
      }),
  )
  registerEvents(server, deps, caller, MCP_MAX_WAIT)
  return server
}

/** The tools with an outputSchema: their answer is also structuredContent (the same JSON). */
const STRUCTURED = new Set(['read_signals', 'get_signal', 'read_thread'])
