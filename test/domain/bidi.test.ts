import t from 'tap'
import { cleanName } from '../../libs/shared/auth/network.js'
import { hasBidiControl, parseEnvelope, WireError } from '../../libs/shared/domain/index.js'

// Bidirectional controls reorder the text around them without showing: a `$type`, tag or name that
// holds one can read as something else in the viewer and the CLI (a "trojan source" spoof).

const SPOOFS = ['\u202e', '\u202a', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\u200f', '\u061c']

const invalidOf = (body: object) => {
  try {
    parseEnvelope(JSON.stringify(body), 60)
    return null
  } catch (err) {
    return err instanceof WireError ? err.code : 'thrown'
  }
}

t.test('a $type or tag holding a bidirectional control is invalid_request', async (t) => {
  for (const c of SPOOFS) {
    t.equal(invalidOf({ $type: `offer${c}evil` }), 'invalid_request', `$type with U+${c.codePointAt(0)!.toString(16)}`)
    t.equal(invalidOf({ $type: 'offer', $tags: [`ok`, `x${c}`] }), 'invalid_request', `a tag with U+${c.codePointAt(0)!.toString(16)}`)
  }
  t.equal(
    invalidOf({ $type: 'offer', $tags: ['café', '👩‍💻', 'שלום'] }),
    null,
    'other text, right-to-left scripts and emoji sequences are fine',
  )
})

t.test('identity names lose bidirectional controls', async (t) => {
  t.equal(cleanName('alice\u202egnp.exe'), 'alicegnp.exe')
  t.equal(cleanName('\u2066\u2069'), null, 'nothing left: no name')
  t.notOk(hasBidiControl(cleanName('a\u2067b\u200fc') ?? ''))
})
