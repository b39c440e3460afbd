/**
 * Bidirectional controls (ALM, LRM, RLM, the embeddings and overrides U+202A–202E, the isolates
 * U+2066–2069): invisible, they reorder the text around them, so a `$type`, a tag or a name holding
 * one can show the viewer and the CLI something other than what it is. One character class,
 * nothing to backtrack.
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, 'g')

export const hasBidiControl = (s: string) => BIDI_CONTROL.test(s)
export const withoutBidiControls = (s: string) => s.replace(BIDI_CONTROLS, '')

/**
 * Characters that show nothing and join or split nothing a reader can see, so `broad\u200bcast`
 * reads as `broadcast` and never matches it: the zero-width space (U+200B), the word joiner and
 * the invisible operators (U+2060–2064, U+2065), the deprecated format controls (U+206A–206F), the
 * byte-order mark (U+FEFF), the soft hyphen (U+00AD), the combining grapheme joiner (U+034F), the
 * Mongolian vowel separator (U+180E), the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the
 * interlinear annotation marks (U+FFF9–FFFB), the musical format controls (U+1D173–1D17A) and the
 * tag characters (U+E0000–E007F, which spell hidden ASCII), except in an emoji flag's tag sequence.
 * The joiners U+200C and U+200D pass only where they change what shows: between two emoji (👩‍💻),
 * or between two letters of a script whose letters join or form conjuncts (Arabic, Indic).
 */
const JOINER_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}]/u
const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]|\u{fe0f}/u
const NOT_ASCII = /[^\x00-\x7f]/
const BLACK_FLAG = 0x1f3f4

function alwaysInvisible(c: number): boolean {
  return (
    c === 0x00ad ||
    c === 0x034f ||
    c === 0x115f ||
    c === 0x1160 ||
    c === 0x180e ||
    c === 0x200b ||
    (c >= 0x2060 && c <= 0x2065) ||
    (c >= 0x206a && c <= 0x206f) ||
    c === 0x3164 ||
    c === 0xfeff ||
    c === 0xffa0 ||
    (c >= 0xfff9 && c <= 0xfffb) ||
    (c >= 0x1d173 && c <= 0x1d17a)
  )
}

const isTag = (c: number) => c >= 0xe0000 && c <= 0xe007f

function joinerShows(joiner: number, before: string | undefined, after: string | undefined): boolean {
  if (before === undefined || after === undefined) return false
  if (joiner === 0x200d && EMOJI.test(before) && /\p{Extended_Pictographic}/u.test(after)) return true
  return JOINER_SCRIPT.test(before) && JOINER_SCRIPT.test(after)
}

/** True if `s` holds an invisible character (above) where it would hide: one pass over the code points, no regex over `s`. */
export function hasInvisible(s: string): boolean {
  if (!NOT_ASCII.test(s)) return false // the usual case
  const cps = Array.from(s)
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!.codePointAt(0)!
    if (alwaysInvisible(c)) return true
    if ((c === 0x200c || c === 0x200d) && !joinerShows(c, cps[i - 1], cps[i + 1])) return true
    if (c === BLACK_FLAG) {
      // a subdivision flag: U+1F3F4, tag letters, U+E007F (cancel tag)
      let j = i + 1
      while (j < cps.length && isTag(cps[j]!.codePointAt(0)!) && cps[j]!.codePointAt(0) !== 0xe007f) j++
      if (j > i + 1 && cps[j]?.codePointAt(0) === 0xe007f) i = j
    } else if (isTag(c)) return true
  }
  return false
}
