export { createHttpApp, EXPOSED_HEADERS, resourceMetadataUrl } from './app.js'
export { errorBody, installErrorHandler, logFailure, Overloaded, retryAfterSeconds, toWireError, sendError, STATUS } from './errors.js'
export { abortOnClose, parseJsonBody, sendJsonText } from './body.js'
export { healthRoutes, READY_DEADLINE_MS, type HealthOptions } from './health.js'
export { httpState } from './state.js'
export { callerOf, installRequestBudget, DOOR, type RequestBudget } from './request-budget.js'
export { installFastPath, type FastPath, type FastPathRoutes } from './fast-path/install.js'
export type { FastConnection } from './fast-path/connection.js'
export type { FastRequest } from './fast-path/request-head.js'
export { encodeResponse, PROBE_ADDRESS, responseText, sharedResponse } from './fast-path/response.js'
export { MAX_PIPELINED, MAX_QUEUED } from './connection-fence.js'
export {
  agentCallerOf,
  INTERNAL_ERROR,
  jsonRpcErrors,
  PARSE_ERROR,
  parseJsonText,
  refusal,
  refused,
  rpcError,
  type AgentCaller,
} from './json-rpc.js'
export { mcpRoutes, type McpAnswer, type McpRoutesOptions } from './mcp-routes.js'
