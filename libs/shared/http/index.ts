export { createHttpApp } from './app.js'
export { errorBody, installErrorHandler, logFailure, toWireError, sendError, STATUS } from './errors.js'
export { abortOnClose, parseJsonBody, sendJsonText } from './body.js'
export { healthRoutes, type HealthOptions } from './health.js'
