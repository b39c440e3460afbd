// Activity per origin: who published the signals the page holds, how many each and how recently,
// busiest first. A row filters the feed by that origin (by its id, never by a name).
import { $, h } from './dom.js'
import { originOf } from './signal-card.js'
import { ago } from './time.js'

const ROWS = 8

export function createOrigins() {
  const list = $('#origins-list')
  const note = $('#origins-note')
  let timer = null
  let source = () => []

  function render(now = Date.now()) {
    timer = null
    const by = new Map() // origin → { s: its newest signal, n, last }
    let total = 0
    for (const s of source()) {
      total++
      const t = Date.parse(s.createdAt)
      const o = by.get(s.origin)
      if (!o) by.set(s.origin, { s, n: 1, last: t })
      else o.n++, t > o.last && ((o.last = t), (o.s = s))
    }
    const rows = [...by.values()].sort((a, b) => b.n - a.n || b.last - a.last)
    const max = rows[0]?.n ?? 1
    list.replaceChildren(
      ...rows.slice(0, ROWS).map(({ s, n, last }) => {
        const o = originOf(s)
        const bar = h('span', { class: 'origin-bar' })
        bar.style.width = `${Math.max(4, Math.round((100 * n) / max))}%` // CSSOM, not a style attribute: the CSP allows it
        return h(
          'li',
          { 'data-origin': s.origin },
          h(
            'button',
            {
              type: 'button',
              class: `link${o.claimed ? ' claimed' : ''}`,
              'data-action': 'filter-origin',
              'data-value': s.origin,
              title: `${s.origin}. Click to show only its signals.`,
            },
            o.name ?? o.short,
          ),
          h('span', { class: 'origin-count' }, String(n)),
          h('span', { class: 'origin-track', 'aria-hidden': 'true' }, bar),
          h(
            'time',
            { class: 'origin-last', datetime: new Date(last).toISOString(), 'data-ago': new Date(last).toISOString() },
            ago(new Date(last).toISOString(), now),
          ),
        )
      }),
    )
    const more = rows.length - ROWS
    note.textContent = total
      ? `${rows.length} origin${rows.length === 1 ? '' : 's'} in the ${total} signal${total === 1 ? '' : 's'} this page holds${more > 0 ? ` (the ${ROWS} busiest shown)` : ''}.`
      : 'No signals on this page yet.'
  }

  return {
    /** `signals()` lists what the page holds; redrawn at most five times a second. */
    watch(signals) {
      source = signals
      this.changed()
    },
    changed() {
      if (timer === null) timer = setTimeout(render, 200)
    },
  }
}
