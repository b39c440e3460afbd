export * as requests from './requests.js'
export * as shapes from './shapes.js'
export { BoardPatch, NewRule, StatsQuery, TagsQuery } from './requests.js'
export {
  admin as adminOperation,
  HEALTH_OPERATIONS,
  mcpOperations,
  open as openOperation,
  type ApiTable,
} from './operations.js'
export { BOARD_API } from './routes.js'
export { openApiDocument } from './openapi.js'
