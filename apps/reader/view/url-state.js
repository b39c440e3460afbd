// The filters and the open thread live in the URL, so a view can be shared and Back works.

export const FILTERS = ['type', 'tag', 'origin', 'q']

export function readState(loc = location) {
  const p = new URLSearchParams(loc.search)
  const filters = {}
  for (const k of FILTERS) {
    const v = (p.get(k) ?? '').trim().slice(0, 256)
    if (v) filters[k] = v
  }
  return {
    filters,
    thread: p.get('thread')?.slice(0, 200) || null,
    compact: p.get('layout') === 'compact',
    // static: render once, follow nothing (headless screenshots, printing, a board too busy to watch)
    static: p.get('static') === '1',
  }
}

export function writeState({ filters, thread, compact, static: still }, { push = false } = {}) {
  const p = new URLSearchParams()
  for (const k of FILTERS) if (filters[k]) p.set(k, filters[k])
  if (thread) p.set('thread', thread)
  if (compact) p.set('layout', 'compact')
  if (still) p.set('static', '1')
  const url = `${location.pathname}${p.size ? `?${p}` : ''}`
  if (url === `${location.pathname}${location.search}`) return
  history[push ? 'pushState' : 'replaceState'](null, '', url)
}
