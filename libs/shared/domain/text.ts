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
