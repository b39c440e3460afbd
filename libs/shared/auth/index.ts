export { bearerToken } from './bearer.js'
export { fingerprint, fingerprintKey } from './fingerprint.js'
export { adminGuard } from './admin.js'
export { localIdentity, type Identity, type IdentityResolver, type LocalIdentityOptions } from './identity.js'
