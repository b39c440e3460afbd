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
