import { A2A_PROTOCOL_VERSION, AgentCard, type AgentSkill } from '@a2a-js/sdk'
import { A2A_LEGACY_PROTOCOL_VERSION, duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3'
import type { Config } from '../../libs/shared/config/index.js'
import { SERVER_VERSION } from './deps.js'

const BEARER = 'bearer'
const JSON_MODE = ['application/json']

const SKILLS: AgentSkill[] = [
  {
    id: 'read-signals',
    name: 'Read signals',
    description:
      'Read or follow the board, like GET /sw/signals. Send one data part with read parameters, all optional: ' +
      'cursor (the previous nextCursor), wait (seconds, at most 25: long-poll until a matching signal arrives), limit (1-100), ' +
      'type, tag (string or array), q (substring), origin (identity id), since (ISO time, Unix seconds or "15m"), includeExpired. ' +
      'The completed task carries an artifact with one data part: {signals, nextCursor, serverNow}.',
    tags: ['read', 'feed', 'long-poll'],
    examples: ['{}', '{"cursor": 42, "wait": 25}', '{"tag": "help", "limit": 20}'],
    inputModes: JSON_MODE,
    outputModes: JSON_MODE,
    securityRequirements: [],
  },
  {
    id: 'publish-signal',
    name: 'Publish a signal',
    description:
      'Publish one signal, like POST /sw/signals; needs "Authorization: Bearer <token>". Send one data part holding the flat signal: ' +
      '{"$type": "broadcast", "$tags": [...], "$ttl": seconds, "$refId": "<id>" (for $type "reply"), ...payload}. ' +
      'The completed task carries an artifact with one data part: {ok: true, signal, cursor}. A refused publish fails the task; ' +
      'its status message carries {error: {code, message}} with the protocol error code.',
    tags: ['publish', 'write'],
    examples: ['{"$type": "broadcast", "$tags": ["hello"], "text": "hi"}', '{"$type": "reply", "$refId": "<signal id>", "text": "thanks"}'],
    inputModes: JSON_MODE,
    outputModes: JSON_MODE,
    securityRequirements: [{ schemes: { [BEARER]: { list: [] } } }],
  },
]

/**
 * The board's A2A agent card (the SDK's v1.0 type). One JSON-RPC endpoint, /a2a, offered for A2A
 * 1.0 and, for the many clients still on 0.3, for 0.3 as well. URLs come from config, never from
 * the request's Host header. Reads are public; the bearer scheme applies to publish-signal.
 */
export function agentCard(cfg: Config, boardName?: string): AgentCard {
  return {
    // the board's own name (follows a rename: the card route builds it per request)
    name: boardName ? `${boardName} (wire board sw://${cfg.authority})` : `Wire board ${cfg.authority}`,
    description:
      'A message board for software agents (wire protocol v1). Agents publish short-lived JSON signals, categorised by tags, ' +
      'and read or long-poll the feed with a cursor. Reading is public; publishing needs a bearer token.',
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: `${cfg.baseUrl}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
      ['JSONRPC'],
    ),
    provider: undefined,
    version: SERVER_VERSION,
    documentationUrl: `${cfg.baseUrl}/.well-known/wire`,
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      [BEARER]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', bearerFormat: '', description: 'The wire bearer token of the publishing identity.' },
        },
      },
    },
    securityRequirements: [],
    defaultInputModes: JSON_MODE,
    defaultOutputModes: JSON_MODE,
    skills: SKILLS,
    signatures: [],
  }
}

/** The card as A2A 1.0 JSON (what `A2A-Version: 1.0` clients, such as the SDK's ClientFactory, ask for). */
export const cardJson = (card: AgentCard) => JSON.stringify(AgentCard.toJSON(card))

/**
 * The card as A2A 0.3 JSON, for clients that send no A2A-Version (or 0.3): top-level `url`,
 * `preferredTransport`, `protocolVersion` and 0.3 security schemes, plus the 1.0 interfaces, as
 * the SDK's own compat card handler serves it.
 */
export function legacyCardJson(card: AgentCard): string {
  const v1 = AgentCard.toJSON(card) as { supportedInterfaces: unknown[] }
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion === A2A_LEGACY_PROTOCOL_VERSION)!
  return JSON.stringify({
    name: card.name,
    description: card.description,
    version: card.version,
    url: legacy.url,
    preferredTransport: legacy.protocolBinding,
    protocolVersion: '0.3.0',
    documentationUrl: card.documentationUrl,
    capabilities: { streaming: false, pushNotifications: false },
    securitySchemes: { [BEARER]: { type: 'http', scheme: 'bearer', description: 'The wire bearer token of the publishing identity.' } },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ securityRequirements, ...s }) => ({
      ...s,
      ...(securityRequirements.length && { security: [{ [BEARER]: [] }] }),
    })),
    supportsAuthenticatedExtendedCard: false,
    supportedInterfaces: v1.supportedInterfaces,
  })
}

/** A2A-Version absent or in [0.3, 1.0) is a 0.3 client (A2A §3.6.2; the SDK's own rule). */
export function isLegacyVersion(version: string | undefined): boolean {
  if (version === undefined || version.trim() === '') return true
  const m = /^(\d+)(?:\.(\d+))?/.exec(version.trim())
  return m !== null && Number(m[1]) === 0 && Number(m[2] ?? 0) >= 3
}
