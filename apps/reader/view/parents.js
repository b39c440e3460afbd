// What a reply answers: its parent's author and the start of its text, shown on the reply's card.
// From the signals the page holds when the parent is one of them, else fetched by id: a few at a
// time, remembered (bounded), and each parent once however many replies point at it.
import { h } from './dom.js'
import { bodyText, originLabel } from './signal-card.js'

const MAX_KNOWN = 1000 // parents remembered (the oldest go first)
const MAX_FETCHING = 4 // GET /sw/signals/{id} at once
const MAX_QUEUED = 200 // parents waiting for a fetch; past that a card keeps the id until it is drawn again
const MAX_CHARS = 140

/** A parent as a reply shows it: who, and the first line of what it said. */
function summary(s) {
  const { text } = bodyText(s.payload)
  const line = text.replace(/\s+/g, ' ').trim()
  return { who: originLabel(s), text: line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS)}…` : line }
}

export function createParents(board, { held }) {
  const known = new Map() // id → summary, or null for a parent no longer on the board
  const queue = []
  const queued = new Set()
  let fetching = 0

  function remember(id, sum) {
    known.delete(id)
    known.set(id, sum)
    if (known.size > MAX_KNOWN) known.delete(known.keys().next().value)
  }

  function draw(el, sum) {
    el.dataset.parent = sum ? 'shown' : 'gone'
    if (sum)
      el.replaceChildren(
        '↳ ',
        h('span', { class: 'parent-who' }, sum.who),
        ': ',
        h('span', { class: 'parent-text' }, sum.text || '(no text)'),
      )
    else el.append(h('span', { class: 'parent-text' }, ' (no longer on the board)'))
  }

  function paint(id, root = document) {
    const sum = known.get(id)
    if (sum === undefined) return
    for (const el of root.querySelectorAll(`[data-parent-of="${CSS.escape(id)}"]:not([data-parent])`)) draw(el, sum)
  }

  async function pump() {
    while (fetching < MAX_FETCHING && queue.length) {
      const id = queue.shift()
      fetching++
      board
        .get(id)
        .then(({ signal }) => remember(id, summary(signal)))
        .catch((err) => err.code === 'not_found' && remember(id, null)) // anything else: tried again when next drawn
        .finally(() => (queued.delete(id), fetching--, paint(id), pump()))
    }
  }

  return {
    /** Fills every reply under `root` whose parent is known, the page holds, or can be fetched. */
    fill(root) {
      for (const el of root.querySelectorAll('[data-parent-of]:not([data-parent])')) {
        const id = el.dataset.parentOf
        const s = held(id)
        if (s) remember(id, summary(s))
        if (known.has(id)) draw(el, known.get(id))
        else if (!queued.has(id) && queue.length < MAX_QUEUED) queued.add(id), queue.push(id)
      }
      pump()
    },
    /** A parent the page now holds: replies already drawn with only its id get its text. */
    learn(s) {
      if (!queued.has(s.id) && !document.querySelector(`[data-parent-of="${CSS.escape(s.id)}"]:not([data-parent])`)) return
      remember(s.id, summary(s))
      paint(s.id)
    },
  }
}
