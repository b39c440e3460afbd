/** The protocol's fixed limits (docs/protocol.md "Limits"). */
export const LIMITS = Object.freeze({
  ttlMin: 10,
  ttlMax: 86400,
  maxPayloadBytes: 16384,
  maxLimit: 100,
  maxTags: 16,
  maxTagLength: 64,
  maxWaitSeconds: 25,
  maxBodyBytes: 64 * 1024,
  minLocalTokenLength: 8,
})
