export * as requests from './requests.js'
export * as shapes from './shapes.js'
export { BoardPatch, NewRule, StatsQuery, TagsQuery } from './requests.js'
export {
  admin as adminOperation,
  BOARD_API,
  HEALTH_OPERATIONS,
  mcpOperations,
  open as openOperation,
  OPERATIONS,
  type ApiTable,
  type Operation,
} from './routes.js'
export { openApiDocument } from './openapi.js'
