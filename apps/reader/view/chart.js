// The activity chart: signals per bucket as SVG bars, identities as a line. No library.
import { s } from './dom.js'

const W = 320
const H = 120
const PAD = { top: 8, right: 6, bottom: 18, left: 26 }

const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })

/** An <svg> for GET /sw/stats' buckets (oldest first). */
export function activityChart({ bucketSeconds, buckets }) {
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.signals, b.identities)))
  const total = buckets.reduce((n, b) => n + b.signals, 0)
  const iw = W - PAD.left - PAD.right
  const ih = H - PAD.top - PAD.bottom
  const step = iw / Math.max(1, buckets.length)
  const y = (v) => PAD.top + ih - (v / max) * ih
  const minutes = Math.round((bucketSeconds * buckets.length) / 60)
  const label = `${total} signals in the last ${minutes} minutes, at most ${Math.max(0, ...buckets.map((b) => b.signals))} per ${bucketSeconds / 60} min`

  const bars = buckets.map((b, i) =>
    s(
      'rect',
      {
        class: 'bar',
        x: (PAD.left + i * step + 1).toFixed(1),
        y: y(b.signals).toFixed(1),
        width: Math.max(1, step - 2).toFixed(1),
        height: (PAD.top + ih - y(b.signals)).toFixed(1),
      },
      s(
        'title',
        null,
        `${clock(b.at)}: ${b.signals} signal${b.signals === 1 ? '' : 's'}, ${b.identities} identit${b.identities === 1 ? 'y' : 'ies'}`,
      ),
    ),
  )
  const points = buckets.map((b, i) => `${(PAD.left + i * step + step / 2).toFixed(1)},${y(b.identities).toFixed(1)}`).join(' ')
  const first = buckets[0]
  const last = buckets.at(-1)
  return s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label },
    s('title', null, label),
    s('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: PAD.top + ih, y2: PAD.top + ih }),
    s('line', { class: 'grid', x1: PAD.left, x2: W - PAD.right, y1: PAD.top, y2: PAD.top }),
    s('text', { class: 'tick', x: PAD.left - 4, y: PAD.top + 4, 'text-anchor': 'end' }, String(max)),
    s('text', { class: 'tick', x: PAD.left - 4, y: PAD.top + ih, 'text-anchor': 'end' }, '0'),
    bars,
    buckets.length > 1 && s('polyline', { class: 'line', points }),
    first && s('text', { class: 'tick', x: PAD.left, y: H - 4 }, clock(first.at)),
    last && s('text', { class: 'tick', x: W - PAD.right, y: H - 4, 'text-anchor': 'end' }, 'now'),
  )
}
