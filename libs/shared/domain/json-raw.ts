import { invalid } from './errors.js'

/** One top-level member of a JSON object, as the client wrote it. */
export interface RawMember {
  key: string // decoded
  rawKey: string // the JSON string literal as sent
  rawValue: string // the value's JSON text as sent
  value: unknown // the value parsed
}

export const MAX_JSON_DEPTH = 32
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/**
 * Parses a request body that must be one JSON object and returns its top-level members in the
 * client's order with their raw text, so payloads can be stored verbatim (`jsonb` and even
 * `JSON.stringify` reorder keys such as "2" before "b"). Refuses, with `invalid_request`, what
 * cannot be stored faithfully or safely: nesting deeper than 32, prototype keys, NUL characters,
 * lone surrogates, numbers that overflow to Infinity, duplicate top-level keys.
 */
export function parseRawObject(text: string): RawMember[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalid('body is not valid JSON')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('signal must be a JSON object')
  // JSON text holds no raw NUL (JSON.parse refuses control characters), so a parsed string can hold
  // a NUL or a lone surrogate only through a \u escape or a lone surrogate in the text itself: with
  // neither, no string needs looking at one by one
  assertStorable(value, text.includes('\\u') || !text.isWellFormed())
  const members = scanMembers(text)
  // JSON.parse keeps one of two members of a name, so the object has fewer keys than the text members
  if (Object.keys(value).length !== members.length) {
    const seen = new Set<string>()
    for (const m of members) {
      if (seen.has(m.key)) throw invalid(`duplicate key ${JSON.stringify(m.key.slice(0, 64))}`)
      seen.add(m.key)
    }
  }
  for (const m of members) m.value = (value as Record<string, unknown>)[m.key]
  return members
}

/**
 * True when `root` nests objects or arrays deeper than `max` (a top-level object is depth 1).
 * Iterative, so a hostile body cannot overflow the stack while it is being checked; surfaces that
 * hand parsed JSON to code that recurses (SDKs, JSON.stringify, structuredClone) check it first.
 */
export function nestsDeeperThan(root: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]]
  while (stack.length) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > max) return true
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1])
  }
  return false
}

/**
 * Iterative walk (no recursion, so hostile depth cannot overflow the stack). Values and their depths
 * go on two stacks side by side: every publish walks its body, and a pair per value would be an
 * allocation per value. `strings` false: the caller knows no string can hold a NUL or a lone
 * surrogate, so none is looked at (the rest is checked as ever).
 */
export function assertStorable(root: unknown, strings = true): void {
  const values: unknown[] = [root]
  const depths: number[] = [1]
  while (values.length) {
    const v = values.pop()
    const depth = depths.pop()!
    if (typeof v === 'string') {
      if (strings) checkString(v)
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw invalid('number out of range')
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_JSON_DEPTH) throw invalid(`JSON nested deeper than ${MAX_JSON_DEPTH}`)
      if (Array.isArray(v)) for (const x of v) values.push(x), depths.push(depth + 1)
      else
        for (const k of Object.keys(v)) {
          if (FORBIDDEN_KEYS.has(k)) throw invalid(`key ${JSON.stringify(k)} is not allowed`)
          if (strings) checkString(k)
          values.push((v as Record<string, unknown>)[k])
          depths.push(depth + 1)
        }
    }
  }
}

function checkString(s: string) {
  if (s.includes('\u0000')) throw invalid('NUL characters are not allowed')
  if (!s.isWellFormed()) throw invalid('strings must be valid Unicode (lone surrogate)')
}

// character codes, compared as numbers
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const isOpen = (c: number) => c === 0x7b || c === 0x5b // { [
const isClose = (c: number) => c === 0x7d || c === 0x5d // } ]
const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/**
 * The text's UTF-16 code units, index for index. @NOTE the scan reads these rather than
 * `text.charCodeAt(i)`: a server hands this module strings of every representation V8 has (flat,
 * concatenated, sliced, one or two bytes a character), and once one call site has seen them all,
 * optimised code calls V8's generic property lookup for `charCodeAt` at every character: in a
 * running writer, most of a publish's parse (bench/results/instructions-39-publish.md).
 */
function codeUnits(text: string): Uint16Array {
  const bytes = Buffer.from(text, 'utf16le')
  // a pooled Buffer starts 8-byte aligned, a larger one at its own memory's start
  return new Uint16Array(bytes.buffer, bytes.byteOffset, text.length)
}

/** Past the string whose opening quote is at `i` (of `n` code units); negative (its bitwise complement) when it holds an escape. */
function stringEnd(u: Uint16Array, n: number, i: number): number {
  let escaped = false
  i++ // opening quote
  while (i < n) {
    const c = u[i]!
    if (c === QUOTE) break
    if (c === BACKSLASH) (i += 2), (escaped = true)
    else i++
  }
  return escaped ? ~(i + 1) : i + 1
}

function skipWs(u: Uint16Array, n: number, i: number): number {
  while (i < n && isWs(u[i]!)) i++
  return i
}

/** Splits already-validated JSON object text into raw members. */
function scanMembers(text: string): RawMember[] {
  const out: RawMember[] = []
  const u = codeUnits(text)
  const n = u.length
  let i = text.indexOf('{') + 1
  for (;;) {
    i = skipWs(u, n, i)
    if (u[i] !== QUOTE) break // '}' of an empty object, or the end
    const keyStart = i
    const keyEnd = stringEnd(u, n, i)
    const escaped = keyEnd < 0
    i = escaped ? ~keyEnd : keyEnd
    const rawKey = text.slice(keyStart, i)
    i = skipWs(u, n, skipWs(u, n, i) + 1) // ':' and the white space either side
    const valueStart = i
    let depth = 0
    while (i < n) {
      const c = u[i]!
      if (c === QUOTE) {
        const end = stringEnd(u, n, i)
        i = end < 0 ? ~end : end
      } else if (isOpen(c)) depth++, i++
      else if (isClose(c)) {
        if (depth === 0) break
        depth--
        i++
      } else if (c === COMMA && depth === 0) break
      else i++
    }
    let end = i
    while (end > valueStart && isWs(u[end - 1]!)) end--
    // a key without an escape is its text between the quotes
    out.push({
      key: escaped ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1),
      rawKey,
      rawValue: text.slice(valueStart, end),
      value: undefined,
    })
    if (u[i] === COMMA) i++
  }
  return out
}
