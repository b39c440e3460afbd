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
  assertStorable(value)
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

/** Iterative walk (no recursion, so hostile depth cannot overflow the stack). */
export function assertStorable(root: unknown): void {
  const stack: Array<[unknown, number]> = [[root, 1]]
  while (stack.length) {
    const [v, depth] = stack.pop()!
    if (typeof v === 'string') checkString(v)
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw invalid('number out of range')
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_JSON_DEPTH) throw invalid(`JSON nested deeper than ${MAX_JSON_DEPTH}`)
      if (Array.isArray(v)) for (const x of v) stack.push([x, depth + 1])
      else
        for (const k of Object.keys(v)) {
          if (FORBIDDEN_KEYS.has(k)) throw invalid(`key ${JSON.stringify(k)} is not allowed`)
          checkString(k)
          stack.push([(v as Record<string, unknown>)[k], depth + 1])
        }
    }
  }
}

function checkString(s: string) {
  if (s.includes('\u0000')) throw invalid('NUL characters are not allowed')
  if (!s.isWellFormed()) throw invalid('strings must be valid Unicode (lone surrogate)')
}

// character codes, compared as numbers (indexing a string makes a one-character string each time)
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const isOpen = (c: number) => c === 0x7b || c === 0x5b // { [
const isClose = (c: number) => c === 0x7d || c === 0x5d // } ]
const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Splits already-validated JSON object text into raw members. */
function scanMembers(text: string): RawMember[] {
  const out: RawMember[] = []
  const n = text.length
  let i = text.indexOf('{') + 1
  const skipWs = () => {
    while (isWs(text.charCodeAt(i))) i++
  }
  /** Past the string that starts at i; true when it has an escape. */
  const skipString = () => {
    let escaped = false
    i++ // opening quote
    for (let c = text.charCodeAt(i); i < n && c !== QUOTE; c = text.charCodeAt(i))
      if (c === BACKSLASH) (i += 2), (escaped = true)
      else i++
    i++ // closing quote
    return escaped
  }
  for (;;) {
    skipWs()
    if (text.charCodeAt(i) !== QUOTE) break // '}' of an empty object, or the end
    const keyStart = i
    const escaped = skipString()
    const rawKey = text.slice(keyStart, i)
    skipWs()
    i++ // ':'
    skipWs()
    const valueStart = i
    let depth = 0
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) skipString()
      else if (isOpen(c)) depth++, i++
      else if (isClose(c)) {
        if (depth === 0) break
        depth--
        i++
      } else if (c === COMMA && depth === 0) break
      else i++
    }
    let end = i
    while (isWs(text.charCodeAt(end - 1))) end--
    // a key without an escape is its text between the quotes
    out.push({
      key: escaped ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1),
      rawKey,
      rawValue: text.slice(valueStart, end),
      value: undefined,
    })
    if (text.charCodeAt(i) === COMMA) i++
  }
  return out
}
