import { hash } from 'node:crypto'
import type { Redis } from 'ioredis'

/** Calls a Lua script: the number of keys, the keys, then the arguments. */
export type ScriptCall = (numberOfKeys: number, ...keysThenArgs: string[]) => Promise<unknown>

/**
 * `lua` as a command of `redis` (ioredis defineCommand): sent by its SHA (EVALSHA, loaded on first
 * use), not as the script's text on every call.
 */
export function redisScript(redis: Redis, name: string, lua: string): ScriptCall {
  redis.defineCommand(name, { lua })
  const command = (redis as unknown as Record<string, ScriptCall>)[name]!
  return (n, ...rest) => command.call(redis, n, ...rest)
}

/**
 * `key` as one line of a batch's key list (the scripts split the list at newlines). Keys are client
 * address keys and identity ids, neither of which holds a newline; one that did is sent as its hash,
 * so it can never split into two keys or shift the batch's answers onto other keys.
 */
export const keyLine = (key: string): string => `${key.indexOf('\n') < 0 ? key : `#nl:${hash('sha256', key, 'base64url')}`}\n`
