export { toolAnswer } from './answer.js'
export { mcpEndpoint, statelessServer } from './endpoint.js'
export { MCP_MAX_WAIT } from './wait.js'
