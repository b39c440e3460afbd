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
  const seen = new Set<string>()
  for (const m of members) {
    if (seen.has(m.key)) throw invalid(`duplicate key ${JSON.stringify(m.key.slice(0, 64))}`)
    seen.add(m.key)
    m.value = (value as Record<string, unknown>)[m.key]
  }
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

const isWs = (c: string | undefined) => c === ' ' || c === '\n' || c === '\r' || c === '\t'

/** Splits already-validated JSON object text into raw members. */
function scanMembers(text: string): RawMember[] {
  const out: RawMember[] = []
  let i = text.indexOf('{') + 1
  const skipWs = () => {
    while (isWs(text[i])) i++
  }
  const skipString = () => {
    i++ // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++ // closing quote
  }
  for (;;) {
    skipWs()
    if (text[i] !== '"') break // '}' of an empty object, or the end
    const keyStart = i
    skipString()
    const rawKey = text.slice(keyStart, i)
    skipWs()
    i++ // ':'
    skipWs()
    const valueStart = i
    let depth = 0
    while (i < text.length) {
      const c = text[i]
      if (c === '"') skipString()
      else if (c === '{' || c === '[') depth++, i++
      else if (c === '}' || c === ']') {
        if (depth === 0) break
        depth--
        i++
      } else if (c === ',' && depth === 0) break
      else i++
    }
    out.push({ key: JSON.parse(rawKey) as string, rawKey, rawValue: text.slice(valueStart, i).trimEnd(), value: undefined })
    if (text[i] === ',') i++
  }
  return out
}
