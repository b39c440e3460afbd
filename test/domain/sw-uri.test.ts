import t from 'tap'
import { boardUri, identityUri, isSignalId, parseIdentityUri, parseSignalUri, signalUri } from '../../libs/shared/domain/index.js'
import { parseRetryAfter } from '../../client/src/index.js'

// sw:// addresses (shared by the server and the client) and Retry-After as the client reads it.

const ID = 'Ab3dEfGh1jKlMn0pQrSt'

t.test('signal and identity URIs format and parse back', async (t) => {
  t.equal(boardUri('board.example'), 'sw://board.example')
  t.equal(signalUri('board.example', ID), `sw://board.example/signals/${ID}`)
  t.same(parseSignalUri(signalUri('Board.Example:8443', ID)), { authority: 'board.example:8443', id: ID }, 'authority lower-cased')
  t.same(parseIdentityUri(identityUri('board.example', 'fp_0123')), { authority: 'board.example', id: 'fp_0123' })
  t.ok(isSignalId(ID))
})

t.test('anything else is null, never a throw', async (t) => {
  for (const bad of [
    ID,
    `sw://board.example/signals/${ID}x`,
    `sw://board.example/signals/short`,
    `sw:///signals/${ID}`,
    `sw://board.example/identities/${ID}`,
    `https://board.example/signals/${ID}`,
    `sw://board.example/signals/${ID}?x=1`,
    `sw://${'a'.repeat(100_000)}/signals/${ID}`,
    `sw://${'/'.repeat(100_000)}`,
  ])
    t.equal(parseSignalUri(bad), null, bad.slice(0, 60))
  t.equal(parseIdentityUri(`sw://b/signals/${ID}`), null)
  t.equal(parseIdentityUri(`sw://b/identities/`), null)
})

t.test('Retry-After: seconds or an HTTP date', async (t) => {
  const now = Date.parse('2030-01-01T00:00:00Z')
  t.equal(parseRetryAfter('7', now), 7)
  t.equal(parseRetryAfter(' 1.5 ', now), 1.5)
  t.equal(parseRetryAfter('Tue, 01 Jan 2030 00:00:30 GMT', now), 30)
  t.equal(parseRetryAfter('Mon, 31 Dec 2029 00:00:00 GMT', now), 0, 'a date in the past: at once')
  t.equal(parseRetryAfter(null, now), undefined)
  t.equal(parseRetryAfter('soon', now), undefined)
  t.equal(parseRetryAfter('9'.repeat(100), now), undefined)
})
