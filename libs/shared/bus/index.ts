export * from './types.js'
export { channels } from './channels.js'
export { localBus, localPresence } from './local.js'
export { redisBus, redisClient, redisPresence } from './redis.js'
