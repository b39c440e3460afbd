import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'

/** One row of the fake network's token table: what `POST /identity/verify` answers for that token. */
export interface FakeIdentityRecord {
  identityId: string
  userId: string
  displayName: string | null
  verified: boolean
  bits: number
}

export interface FakeIdentity {
  /** Base address, e.g. `http://127.0.0.1:43121`: pass it as IDENTITY_URL. Stable across stop/start. */
  readonly url: string
  /** `127.0.0.1:<port>`: the authority of the identity URIs the board emits. */
  readonly authority: string
  /** token → record; add, change or delete rows at any time. */
  readonly tokens: Map<string, FakeIdentityRecord>
  /** Every verify received, in order: the token it carried and the JSON body. */
  readonly verifies: Array<{ token: string | null; body: unknown }>
  /** How many verifies carried this token (all of them without an argument). */
  verifyCalls(token?: string): number
  /** How many registrations were answered. */
  registerCalls(): number
  /** Answers every call this much later (a slow network). 0: at once. */
  delayMs: number
  /** When set, every call answers this status with no identity (e.g. 500, 502). */
  failWith: number | null
  /** Closes the server: calls get connection refused. Waiting answers are dropped. */
  stop(): Promise<void>
  /** Listens again on the same port. */
  start(): Promise<void>
}

const record = (id: string, r: Partial<FakeIdentityRecord> = {}): FakeIdentityRecord => ({
  identityId: id,
  userId: `user_${id}`,
  displayName: `Agent ${id}`,
  verified: true,
  bits: 10,
  ...r,
})

/**
 * The one fake we allow (STYLE §11): a real HTTP identity network on port 0 answering from a token
 * table. Our guesses about the contract (the spec shows neither call's shapes) live only here and
 * in libs/shared/auth/network.ts:
 *   POST /identity/verify    Authorization: Bearer <token>, {authority} → 200 record | 401
 *   POST /identity/register  {authority} → 200 {token, identityId}; the new identity is unverified, 0 bits
 */
export async function startFakeIdentity(
  t: Test,
  table: Record<string, Partial<FakeIdentityRecord> & { identityId: string }> = {},
): Promise<FakeIdentity> {
  const tokens = new Map(Object.entries(table).map(([token, r]) => [token, record(r.identityId, r)]))
  const verifies: FakeIdentity['verifies'] = []
  let registered = 0
  let server: FastifyInstance | null = null
  let stopping = new AbortController()
  let port = 0

  const answer = async () => {
    if (fake.delayMs > 0) await sleep(fake.delayMs, undefined, { signal: stopping.signal }).catch(() => {})
    return fake.failWith
  }

  const build = () => {
    const app = Fastify({ forceCloseConnections: true })
    app.post('/identity/verify', async (req, reply) => {
      const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')
      const token = m?.[1] ?? null
      verifies.push({ token, body: req.body })
      const fail = await answer()
      if (fail !== null) return reply.code(fail).send({ error: 'fake failure' })
      const r = token === null ? undefined : tokens.get(token)
      if (!r) return reply.code(401).send({ error: 'unknown token' })
      return r
    })
    app.post('/identity/register', async (_req, reply) => {
      const fail = await answer()
      if (fail !== null) return reply.code(fail).send({ error: 'fake failure' })
      registered++
      const token = `reg_${randomBytes(12).toString('hex')}`
      const identityId = `id_reg${registered}`
      tokens.set(token, record(identityId, { verified: false, bits: 0, displayName: null }))
      return { token, identityId }
    })
    return app
  }

  const fake: FakeIdentity = {
    get url() {
      return `http://127.0.0.1:${port}`
    },
    get authority() {
      return `127.0.0.1:${port}`
    },
    tokens,
    verifies,
    verifyCalls: (token) => (token === undefined ? verifies.length : verifies.filter((v) => v.token === token).length),
    registerCalls: () => registered,
    delayMs: 0,
    failWith: null,
    async start() {
      if (server) return
      stopping = new AbortController()
      const app = build()
      await app.listen({ host: '127.0.0.1', port })
      port = (app.server.address() as { port: number }).port
      server = app
    },
    async stop() {
      if (!server) return
      const app = server
      server = null
      stopping.abort() // delayed answers give up, so close() needn't wait for them
      await app.close()
    },
  }
  await fake.start()
  t.teardown(() => fake.stop())
  return fake
}
