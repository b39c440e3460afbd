// The viewer: wires the feed, filters, thread, board panel and operator mode to the URL and the board.
import { createBoardPanel } from './board-panel.js'
import { $ } from './dom.js'
import { createFeed } from './feed.js'
import { createFilters } from './filters.js'
import { createOperator } from './operator.js'
import { createOrigins } from './origins.js'
import { createThread } from './thread.js'
import { readState, writeState } from './url-state.js'
import { openBoard } from './wire.js'

const board = openBoard()
let state = readState()
// static mode (/view?static=1): one render, no long-poll and no timers, so a headless browser's
// --virtual-time-budget (which waits for the network to go idle) can finish
const live = !state.static

const origins = createOrigins()
// the panel's counts and the per-origin list follow what the feed holds (bounded: see each)
const feed = createFeed(board, { onChange: () => (live ? panel.nudge() : panel.cover(), origins.changed()) })
origins.watch(() => feed.signals())
const filters = createFilters(board, (f) => {
  state = { ...state, filters: f }
  writeState(state)
  feed.follow(f, { live })
})
const thread = createThread(board, {
  onClose: () => {
    if (!state.thread) return
    state = { ...state, thread: null }
    writeState(state)
  },
})
const panel = createBoardPanel(board, {
  onBoard: (b) => filters.setTypes(b.allowedSignalTypes),
  held: () => feed.held(),
  filtered: () => feed.filtered(),
})
const operator = createOperator(board, {
  onBoard: (b) => (panel.showMeta(b), filters.setTypes(b.allowedSignalTypes)),
  onSignal: (s) => (feed.update(s), thread.update(s)),
  onRemoved: (id) => (feed.drop(id), thread.drop(id)),
})

function openThread(id) {
  state = { ...state, thread: id }
  writeState(state, { push: true })
  thread.open(id, { live })
}

// compact: one line per signal, for busy boards; kept in the URL like the filters
function setCompact(on) {
  document.body.classList.toggle('compact', on)
  $('#layout-toggle').setAttribute('aria-pressed', String(on))
}
$('#layout-toggle').addEventListener('click', () => {
  state = { ...state, compact: !state.compact }
  writeState(state)
  setCompact(state.compact)
})

// every card button, in the feed and in the thread, by its data-action
document.addEventListener('click', (e) => {
  const btn = e.target.closest('button[data-action]')
  if (!btn) return
  const { action, value } = btn.dataset
  if (action === 'thread' || action === 'parent')
    openThread(value) // a reply's parent: its thread, at the parent
  else if (action.startsWith('filter-')) thread.close(), filters.apply(action.slice('filter-'.length), value)
  else operator.act({ action, id: value })
})

// Back and Forward close and reopen a thread (and follow any URL the page is sent back to)
addEventListener('popstate', () => {
  state = readState()
  filters.set(state.filters)
  setCompact(state.compact)
  feed.follow(state.filters, { live })
  if (state.thread) thread.open(state.thread, { live })
  else thread.close()
})

if (live)
  setInterval(() => {
    const now = Date.now()
    feed.tick(now)
    thread.tick(now)
    origins.changed() // its "last seen" times
  }, 5000)

// on a phone the board panel starts folded, so the feed comes first
if (matchMedia('(max-width: 800px)').matches) $('#board-details').open = false
filters.set(state.filters)
filters.setTypes(null)
setCompact(state.compact)
feed.follow(state.filters, { live })
if (live) panel.start()
else panel.refresh()
if (state.thread) thread.open(state.thread, { live })
