/** `sw://` addresses (spec "Addresses"). Dependency-free: the client compiles this file in too. */

const ID_RE = /^[0-9A-Za-z]{20}$/
// bounded and linear: an authority has no slash, an id no slash, query or fragment
const SIGNAL_URI_RE = /^sw:\/\/([^/]{1,255})\/signals\/([^/?#]{1,64})$/
const IDENTITY_URI_RE = /^sw:\/\/([^/]{1,255})\/identities\/([^/?#]{1,256})$/

/** A signal id: 20 characters from [0-9A-Za-z]. */
export const isSignalId = (s: string) => ID_RE.test(s)

export const boardUri = (authority: string) => `sw://${authority}`
export const signalUri = (authority: string, id: string) => `sw://${authority}/signals/${id}`
export const identityUri = (authority: string, id: string) => `sw://${authority}/identities/${id}`

/** `sw://<authority>/signals/<id>` → its parts, or null when the text is not a signal URI. */
export function parseSignalUri(uri: string): { authority: string; id: string } | null {
  const m = uri.length <= 400 ? SIGNAL_URI_RE.exec(uri.trim()) : null
  return m && isSignalId(m[2]!) ? { authority: m[1]!.toLowerCase(), id: m[2]! } : null
}

/** `sw://<authority>/identities/<id>` → its parts, or null when the text is not an identity URI. */
export function parseIdentityUri(uri: string): { authority: string; id: string } | null {
  const m = uri.length <= 600 ? IDENTITY_URI_RE.exec(uri.trim()) : null
  return m ? { authority: m[1]!.toLowerCase(), id: m[2]! } : null
}
