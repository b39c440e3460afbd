export * as requests from './requests.js'
export * as shapes from './shapes.js'
export { BoardPatch, NewRule, StatsQuery, TagsQuery } from './requests.js'
export {
  admin as adminOperation,
  HEALTH_OPERATIONS,
  mcpOperations,
  open as openOperation,
  type ApiTable,
  type Operation,
} from './operations.js'
export { BOARD_API, OPERATIONS } from './routes.js'
export { openApiDocument } from './openapi.js'
