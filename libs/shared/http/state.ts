import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import type { HttpSettings } from './settings.js'

/** Whose X-Forwarded-For is believed: a function as fastify's trustProxy takes it, or null (the socket's address). */
export type TrustFn = (address: string, hop: number) => boolean

/** TRUST_PROXY as one function, handed to fastify and used by the fast path, so both compute req.ip alike. */
export function trustFunction(trust: HttpSettings['trustProxy']): TrustFn | null {
  if (trust === false) return null
  if (trust === true) return () => true
  if (typeof trust === 'number') return (_address, hop) => hop < trust // that many proxies nearest to us
  return proxyAddr.compile(trust)
}

/** What a fastify app made by createHttpApp knows of itself, for code that serves below fastify (the fast path). */
export interface HttpState {
  readonly settings: HttpSettings
  readonly trust: TrustFn | null
  /** Shutdown has begun (preClose). */
  closing: boolean
  /** @fastify/under-pressure would shed now. */
  overloaded(): boolean
  /** A request head arrived on `socket` (below node's server): its first-request deadline is met. */
  requestArrived(socket: import('node:net').Socket): void
  /** A request carried X-Forwarded-For while TRUST_PROXY is off: warns the operator (at most once an hour). */
  forwardedIgnored(): void
}

// a property, not a WeakMap: plugin instances inherit it from the root (fastify makes them with Object.create)
const kState = Symbol('wire.httpState')

export function setHttpState(app: FastifyInstance, state: HttpState) {
  Object.defineProperty(app, kState, { value: state })
}

export function httpState(app: FastifyInstance): HttpState {
  const s = (app as unknown as { [kState]?: HttpState })[kState]
  if (!s) throw new Error('not an app made by createHttpApp')
  return s
}
