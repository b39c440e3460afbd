export { LIMITS } from './wire-types.js'
