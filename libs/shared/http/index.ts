export { createHttpApp, resourceMetadataUrl, type HttpAppOptions } from './app.js'
export { installErrorHandler, toWireError, sendError, STATUS } from './errors.js'
export { parseJsonBody, sendJsonText } from './body.js'
export { healthRoutes, type HealthOptions } from './health.js'
