import { parseReadQuery, parseSignalRef, WireError, type Signal } from '../domain/index.js'
import type { ReadSide } from './read-side.js'

// The read responses of GET /sw/signals, /sw/signals/{id} and /sw/signals/{id}/thread as JSON text,
// built from signals serialised once, for surfaces that answer reads outside those routes (MCP, A2A).

const list = (jsons: string[]) => `[${jsons.join(',')}]`
const now = () => JSON.stringify(new Date().toISOString())

/**
 * `{signals, nextCursor, serverNow}` for read parameters given as GET /sw/signals' query
 * (strings; `tag` may be an array). Waits when `wait` asks to, until `onGone`'s callback fires.
 */
export async function readPageJson(
  reads: ReadSide,
  raw: Record<string, unknown>,
  poller: string,
  onGone: (cb: () => void) => void,
): Promise<string> {
  const q = parseReadQuery(raw, Date.now())
  reads.presence.touch(poller)
  const page = await reads.feed.read(q, onGone)
  return `{"signals":${list(page.jsons)},"nextCursor":${page.nextCursor},"serverNow":${now()}}`
}

/** `{signal, replies, serverNow}` for a raw id or sw:// URI; not_found when unknown, removed or swept. */
export async function signalJson(reads: ReadSide, authority: string, ref: string): Promise<string> {
  const id = idOf(ref, authority)
  const signal = await reads.signals.byId(id)
  if (!signal) throw new WireError('not_found', 'no such signal')
  const replies = await reads.signals.replies(id)
  return `{"signal":${ser(reads, signal)},"replies":${list(replies.map((s) => ser(reads, s)))},"serverNow":${now()}}`
}

/** `{signals}`: the root and all its descendants, oldest-first; not_found for an unknown root. */
export async function threadJson(reads: ReadSide, authority: string, ref: string): Promise<string> {
  const id = idOf(ref, authority)
  const signals = await reads.signals.thread(id)
  if (!signals.length || signals[0]!.id !== id) throw new WireError('not_found', 'no such signal')
  return `{"signals":${list(signals.map((s) => ser(reads, s)))}}`
}

const ser = (reads: ReadSide, s: Signal) => reads.feed.serialize(s)

function idOf(ref: string, authority: string): string {
  try {
    return parseSignalRef(ref, authority)
  } catch {
    throw new WireError('not_found', 'no such signal')
  }
}
