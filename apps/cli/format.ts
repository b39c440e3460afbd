import type { EmittedSignal } from '../../client/src/index.js'

const paint = (code: number) => (s: string) => `\u001b[${code}m${s}\u001b[0m`
const plain = (s: string) => s
const COLOURS = { dim: paint(2), type: paint(36), tag: paint(33), origin: paint(35), pin: paint(31) }
const NONE = { dim: plain, type: plain, tag: plain, origin: plain, pin: plain }

/** `12s ago`, `5m ago`, `3h ago`, `2d ago`; `in 4s` for a clock slightly behind the server's. */
export function relativeTime(iso: string, nowMs: number): string {
  const ms = nowMs - Date.parse(iso)
  if (!Number.isFinite(ms)) return iso
  const s = Math.round(Math.abs(ms) / 1000)
  const text = s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`
  return ms >= 0 ? `${text} ago` : `in ${text}`
}

/** The payload in one short line: its `text` when it has one, else its JSON without the envelope. */
function payloadSummary(s: EmittedSignal, max = 200): string {
  const { $type: _t, $tags: _g, ...rest } = s.payload
  const text = typeof rest.text === 'string' ? rest.text : Object.keys(rest).length ? JSON.stringify(rest) : ''
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}

export interface LineStyle {
  colour: boolean
  /** Relative times (a terminal) or ISO timestamps (a pipe or a file). */
  relative: boolean
  nowMs?: number
}

/** One signal on one line: when, type, who, tags, payload, id (and what it replies to). */
export function signalLine(s: EmittedSignal, style: LineStyle): string {
  const c = style.colour ? COLOURS : NONE
  const when = style.relative ? relativeTime(s.createdAt, style.nowMs ?? Date.now()).padStart(8) : s.createdAt
  const who = s.originName ? `${s.originName} (${s.origin})` : s.origin
  const tags = s.tags.map((t) => c.tag(`#${t}`)).join(' ')
  const parts = [c.dim(when), c.type(s.type), c.origin(who)]
  if (tags) parts.push(tags)
  if (s.pinned) parts.push(c.pin('[pinned]'))
  const summary = payloadSummary(s)
  if (summary) parts.push(summary)
  parts.push(c.dim(s.refId ? `${s.id} ↩ ${s.refId}` : s.id))
  return parts.join('  ')
}

/** A thread as an indented tree: each reply under what it replies to, two spaces a level, oldest first. */
export function threadTree(signals: EmittedSignal[], style: LineStyle): string[] {
  const ids = new Set(signals.map((s) => s.id))
  const children = new Map<string, EmittedSignal[]>()
  const roots: EmittedSignal[] = []
  for (const s of signals) {
    if (s.refId && ids.has(s.refId)) children.set(s.refId, [...(children.get(s.refId) ?? []), s])
    else roots.push(s)
  }
  const lines: string[] = []
  const walk = (s: EmittedSignal, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${signalLine(s, style)}`)
    for (const child of children.get(s.id) ?? []) walk(child, depth + 1)
  }
  for (const r of roots) walk(r, 0)
  return lines
}
