import type { SignalReader } from '../db/index.js'
import { parseSignalRef, serializeSignal, WireError, type Signal } from '../domain/index.js'
import type { FeedPage, PageText } from './page.js'

/** What by-id and thread read from. */
export type SignalSource = Pick<SignalReader, 'byId' | 'replies' | 'thread'>

// The read responses of GET /sw/signals, /sw/signals/{id} and /sw/signals/{id}/thread as JSON text:
// the one renderer for the reader's routes and the agent surfaces (MCP, A2A). By-id and thread
// serialise the rows just read (the tail's cached copy may predate a pin or unpin).

const list = (jsons: string[]) => `[${jsons.join(',')}]`
let nowMs = -1
let nowJson = ''
/** serverNow as JSON text, made once per millisecond (pages are encoded in bursts). */
const now = () => {
  const ms = Date.now()
  if (ms !== nowMs) (nowMs = ms), (nowJson = JSON.stringify(new Date(ms).toISOString()))
  return nowJson
}

/**
 * The GET /sw/signals body for a page as text, made once per page: the fast path writes a page it
 * answers once as text (node encodes it into memory it frees when the write is done), and
 * `pageBody` encodes it for a page many answers share. Its length in bytes comes from its parts
 * (the signals' JSON and an ASCII rest), so the text itself is never scanned or flattened for it.
 */
export function pageText(page: FeedPage): PageText {
  if (page.text !== undefined) return page.text
  const partial = page.partial ? ',"partial":true' : '' // the scan bound stopped it short: read on from nextCursor at once
  const signals = page.signals.join(',')
  const rest = `],"nextCursor":${page.nextCursor}${partial},"serverNow":${now()}}` // ASCII: a byte a character
  return (page.text = { text: `{"signals":[${signals}${rest}`, bytes: 12 + Buffer.byteLength(signals) + rest.length })
}

/**
 * The GET /sw/signals body for a page, encoded once: long-polls woken by the same signal share
 * one page object, so thousands of responses send the same bytes.
 */
export function pageBody(page: FeedPage): Buffer {
  return (page.body ??= Buffer.from(pageText(page).text))
}

/** `{signal, replies, serverNow}` for a raw id or sw:// URI; not_found when unknown, removed or swept. */
export async function signalJson(signals: SignalSource, authority: string, ref: string): Promise<string> {
  const id = idOf(ref, authority)
  const signal = await signals.byId(id)
  if (!signal) throw new WireError('not_found', 'no such signal')
  const replies = await signals.replies(id)
  const ser = (s: Signal) => serializeSignal(s, authority)
  return `{"signal":${ser(signal)},"replies":${list(replies.map(ser))},"serverNow":${now()}}`
}

/** `{signals}`: the root and all its descendants, oldest-first; not_found for an unknown root. */
export async function threadJson(source: SignalSource, authority: string, ref: string): Promise<string> {
  const id = idOf(ref, authority)
  const signals = await source.thread(id)
  if (!signals.length || signals[0]!.id !== id) throw new WireError('not_found', 'no such signal')
  return `{"signals":${list(signals.map((s) => serializeSignal(s, authority)))}}`
}

function idOf(ref: string, authority: string): string {
  try {
    return parseSignalRef(ref, authority)
  } catch {
    throw new WireError('not_found', 'no such signal')
  }
}
