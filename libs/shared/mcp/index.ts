export { toolAnswer } from './answer.js'
export { mcpEndpoint, statelessServer } from './endpoint.js'
