import { createRequire } from 'node:module'
import type * as Flexible from 'rate-limiter-flexible'

/**
 * The two classes of rate-limiter-flexible Wire uses, from their own files: the package's index
 * loads every store it supports (Mongo, MySQL, DynamoDB, …), some 7 MB of RSS in every process.
 * The same modules as the index's, so `instanceof RateLimiterRes` holds either way.
 */
const require = createRequire(import.meta.url)
export const RateLimiterMemory: typeof Flexible.RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory.js')
export const RateLimiterRes: typeof Flexible.RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes.js')
export type RateLimiterRes = Flexible.RateLimiterRes
export type RateLimiterMemory = Flexible.RateLimiterMemory
