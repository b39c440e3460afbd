export { toolAnswer } from './answer.js'
export { mcpEndpoint, statelessServer } from './endpoint.js'
export { clampedWait, MCP_MAX_WAIT } from './wait.js'
