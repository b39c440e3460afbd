import t from 'tap'
import { hasInvisible, parseEnvelope, WireError } from '../../libs/shared/domain/index.js'

// Invisible characters make a `$type` or tag that reads as another (`broad\u200bcast` shows as
// `broadcast` and never matches it); they are refused as the bidirectional controls are.

const HIDDEN = [
  0x200b, 0x200c, 0x200d, 0xfeff, 0x00ad, 0x034f, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180e, 0x206a, 0x206f, 0x115f, 0x1160, 0x3164,
  0xffa0, 0xfff9, 0x1d173, 0xe0041, 0xe007f,
]

const codeOf = (body: object) => {
  try {
    parseEnvelope(JSON.stringify(body), 60)
    return null
  } catch (err) {
    return err instanceof WireError ? err.code : 'thrown'
  }
}
const hex = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`

t.test('a $type or tag holding an invisible character is invalid_request', async (t) => {
  for (const c of HIDDEN) {
    const ch = String.fromCodePoint(c)
    t.equal(codeOf({ $type: `broad${ch}cast` }), 'invalid_request', `$type with ${hex(c)}`)
    t.equal(codeOf({ $type: 'broadcast', $tags: ['ok', `x${ch}y`] }), 'invalid_request', `a tag with ${hex(c)}`)
    // at the ends: refused, or (U+FEFF, which JavaScript trims as white space) trimmed away
    if (c === 0xfeff)
      t.equal(parseEnvelope(JSON.stringify({ $type: `${ch}broadcast${ch}` }), 60).type, 'broadcast', `${hex(c)} at both ends is trimmed`)
    else t.equal(codeOf({ $type: `${ch}broadcast${ch}` }), 'invalid_request', `$type with ${hex(c)} at both ends`)
  }
})

t.test('joiners that show, emoji sequences and other scripts pass', async (t) => {
  const fine = [
    'broadcast',
    'café',
    'שלום',
    '👩‍💻', // woman technologist: U+200D between two emoji
    '👩🏽‍🚀', // with a skin tone before the joiner
    '❤️‍🔥', // a variation selector before it
    '🏴󠁧󠁢󠁳󠁣󠁴󠁿', // Scotland: tag characters ending in U+E007F after U+1F3F4
    'می‌خواهم', // Persian: U+200C between Arabic letters
    'क्‍ष', // Devanagari: U+200D in a conjunct
  ]
  for (const s of fine) {
    t.notOk(hasInvisible(s), `${s} has nothing hidden`)
    t.equal(codeOf({ $type: s, $tags: [s] }), null, `${s} publishes`)
  }
  t.ok(hasInvisible('a\u200db'), 'a joiner between Latin letters hides')
  t.ok(hasInvisible('👩\u200d'), 'a joiner at the end hides')
  t.ok(hasInvisible('\u{1f3f4}\u{e0067}\u{e0062}'), 'a flag tag sequence without its end hides')
  t.ok(hasInvisible('x\u{e0067}\u{e007f}'), 'tag characters outside a flag hide')
})

t.test('a long run of joiners is judged joiner by joiner', async (t) => {
  t.ok(hasInvisible(`${'\u0627\u200c'.repeat(50_000)}\u200b`))
  t.notOk(hasInvisible(`${'\u0627\u200c'.repeat(50_000)}\u0627`))
})
