import { z } from 'zod'
import { systemClock, type Clock } from '../clock.js'
import { WireError, identityUri, withoutBidiControls } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { reportIdentityCall } from '../metrics/index.js'
import { bearerToken, bearerTokenOrNull } from './bearer.js'
import type { Identity, IdentityResolver } from './identity.js'
import { tokenKey, verifyCache, type Verdict } from './verify-cache.js'

/** docs/protocol.md "Identity": the verify call. */
const VERIFY_PATH = '/identity/verify'
// @NOTE the spec shows no registration call ("not shown"). This path and `Registered` below are our
// guess, made here and in test/helpers/fake-identity.ts only: POST {authority} → {token, identityId}.
const REGISTER_PATH = '/identity/register'

/** Ids go into `sw://…/identities/<id>` URIs: one path segment of printable characters. */
const IdentityId = z.string().regex(/^[^\s/?#\u0000-\u001f\u007f]{1,256}$/)
const Verified = z.object({
  identityId: IdentityId,
  userId: z.string().nullish(), // carried by the network, not emitted by the board
  displayName: z.string().nullish(),
  verified: z.boolean(),
  bits: z.number().finite(),
})
const Registered = z.object({ token: z.string().min(1), identityId: IdentityId })

// C0 and C1 controls, DEL, and the line/paragraph separators: one character class, nothing to backtrack
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

/** The network's display name as a signal may carry it: no control characters (NUL included) or bidirectional controls, well-formed, trimmed, at most 256. */
export function cleanName(name: string | null | undefined): string | null {
  if (!name) return null
  return withoutBidiControls(name.slice(0, 1024).toWellFormed().replace(CONTROL, '')).trim().slice(0, 256).toWellFormed() || null
}

const RETRY_AFTER_SECONDS = 5
/** Reads start at most this many background verifies at once, so tokens on reads can't flood the network. */
const MAX_BACKGROUND_VERIFIES = 8

export interface NetworkIdentityOptions {
  /** IDENTITY_URL, the identity network's base address. */
  url: string
  /** This board's authority (PUBLIC_WIRE_HOST), sent with every verify as the token's scope. */
  authority: string
  log: Logger
  /** Per call to the identity network, answer body included. */
  timeoutMs?: number
  validMs?: number
  rejectedMs?: number
  /** What verdict ages and the pause after a failure are measured by (tests drive their own). */
  clock?: Clock
}

/**
 * Network mode: every publish token is verified with `POST {IDENTITY_URL}/identity/verify`.
 * 2xx → the identity and its standing; 401/403 → unauthorized; anything else, a timeout or no
 * connection → 503 unavailable with Retry-After (fail closed). Verdicts are cached per process by
 * token hash (accepted ~30 s, rejected ~5 s), one call per key at a time.
 */
export function networkIdentity(o: NetworkIdentityOptions): IdentityResolver {
  const log = o.log.child({ mod: 'identity' })
  const base = o.url.replace(/\/+$/, '')
  const networkAuthority = new URL(base).host // the identity URIs' authority: the network's, not the board's
  const timeoutMs = o.timeoutMs ?? 3000
  const clock = o.clock ?? systemClock
  const cache = verifyCache<Identity>({
    validMs: o.validMs ?? 30_000,
    rejectedMs: o.rejectedMs ?? 5_000,
    ...(o.clock && { now: o.clock.now }),
  })
  let background = 0
  let downAt = -Infinity

  const unavailable = (reason: string, cause?: unknown) => {
    downAt = clock.now()
    log.debug({ reason }, 'identity network unavailable')
    return new WireError('unavailable', 'the identity network is unavailable; try again shortly', undefined, {
      retryAfter: RETRY_AFTER_SECONDS,
      ...(cause !== undefined && { cause }),
    })
  }

  /** One POST with a JSON body; the timeout covers the answer's body too. */
  async function call<T>(path: string, headers: Record<string, string>, parse: (res: Response, body: unknown) => T): Promise<T> {
    const t0 = Date.now()
    try {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ authority: o.authority }),
        redirect: 'error', // never carry a bearer token to wherever a redirect points
        signal: AbortSignal.timeout(timeoutMs),
      })
      const body: unknown = res.ok ? await res.json() : await res.body?.cancel()
      log.debug({ path, status: res.status, ms: Date.now() - t0 }, 'identity network answered')
      return parse(res, body)
    } catch (err) {
      if (err instanceof WireError) throw err
      const timedOut = (err as { name?: unknown } | null)?.name === 'TimeoutError'
      throw unavailable(timedOut ? `no answer within ${timeoutMs} ms` : 'request failed', err)
    }
  }

  /** One verify call; its outcome sets wire_identity_network_up (an answer, even a rejection, means the network is up). */
  const verify = (token: string): Promise<Verdict<Identity>> =>
    verifyCall(token).then(
      (v) => (reportIdentityCall(v.ok ? 'accepted' : 'rejected'), v),
      (err: unknown) => {
        reportIdentityCall('unavailable')
        throw err
      },
    )

  const verifyCall = (token: string): Promise<Verdict<Identity>> =>
    call(VERIFY_PATH, { authorization: `Bearer ${token}` }, (res, body): Verdict<Identity> => {
      if (res.status === 401 || res.status === 403) return { ok: false }
      // other 4xx are our mistake (wrong URL, changed contract), not the caller's: fail closed, not 401
      if (!res.ok) throw unavailable(`verify answered ${res.status}`)
      const v = Verified.safeParse(body)
      if (!v.success) throw unavailable('verify answered an unexpected body')
      const { identityId: id, displayName, verified, bits } = v.data
      const name = cleanName(displayName)
      return { ok: true, value: { id, name, uri: identityUri(networkAuthority, id), verified, bits } }
    })

  /** Read path: learn the token's identity without anyone waiting; failures only pause this briefly. */
  const verifyInBackground = (key: string, token: string) => {
    if (cache.pending(key) || background >= MAX_BACKGROUND_VERIFIES) return
    if (clock.now() - downAt < RETRY_AFTER_SECONDS * 1000) return
    background++
    cache
      .resolve(key, () => verify(token))
      .catch(() => {}) // already logged by unavailable(); a read never fails on it
      .finally(() => background--)
  }

  return {
    mode: 'network',
    async authenticate(authorization) {
      const token = bearerToken(authorization)
      if (token === null) throw new WireError('unauthorized', 'publishing needs Authorization: Bearer <token>')
      const verdict = await cache.resolve(tokenKey(token), () => verify(token))
      if (!verdict.ok) throw new WireError('unauthorized', 'the identity network did not accept this token')
      return verdict.value
    },
    // @NOTE presence only: a cached identity counts as itself; an unknown token counts as a hash of
    // itself while a background verify learns its identity for the next read (docs/identity.md)
    peek(authorization) {
      const token = bearerTokenOrNull(authorization)
      if (token === null) return null
      const key = tokenKey(token)
      const known = cache.get(key)
      if (known !== undefined) return known.ok ? known.value.id : null
      verifyInBackground(key, token)
      return `tok:${key.slice(0, 22)}`
    },
    async register() {
      return call(REGISTER_PATH, {}, (res, body) => {
        if (!res.ok) throw unavailable(`register answered ${res.status}`)
        const r = Registered.safeParse(body)
        if (!r.success) throw unavailable('register answered an unexpected body')
        return { token: r.data.token, identityId: r.data.identityId, identityUri: identityUri(networkAuthority, r.data.identityId) }
      })
    },
  }
}
