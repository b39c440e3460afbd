// The board panel: name, description, allowed types, live counts and the activity chart.
import { $, h } from './dom.js'
import { activityChart } from './chart.js'

const REFRESH_MS = 15_000
const NUDGE_MS = 2000 // the counts follow the feed: at most one stats read per 2 s, however busy the board

/**
 * `held()` is how many signals the feed holds ({ shown, waiting }) and `filtered()` whether it is filtered, so the panel
 * can say how the feed's count relates to the board's.
 */
export function createBoardPanel(board, { onBoard, held = () => ({ shown: 0, waiting: 0 }), filtered = () => false }) {
  let timer = null
  let active = null
  let inFlight = false
  let again = false
  let last = 0
  let soon = null

  function showMeta(b) {
    $('#board-name').textContent = b.name
    document.title = `${b.name} · Wire viewer`
    $('#board-title').textContent = b.name
    $('#board-uri').textContent = b.uri
    $('#board-description').textContent = b.description ?? 'No description.'
    const types = b.allowedSignalTypes
    $('#board-types').replaceChildren(
      ...(types?.length ? types.map((t) => h('li', null, h('code', null, t))) : [h('li', null, 'any type')]),
    )
  }

  /** How the feed's count relates to the board's: all of them, some (load older), or a filter's. */
  function showCover() {
    const { shown, waiting } = held()
    const n = shown + waiting
    const above = waiting ? ` (${waiting} of them new, above it)` : ''
    $('#stat-cover').textContent =
      active === null
        ? ''
        : filtered()
          ? `The feed holds ${n} signal${n === 1 ? '' : 's'} matching its filters${above}.`
          : n >= active
            ? `The feed holds all ${active}${above}.`
            : `The feed holds the newest ${n} of these ${active}${above}: Load older, at its end, shows more.`
  }

  function showStats(current) {
    active = current.activeSignals
    $('#stat-signals').textContent = String(current.activeSignals)
    $('#stat-identities').textContent = String(current.activeIdentities)
    $('#stat-pollers').textContent = String(current.recentPollers)
    showCover()
  }

  async function readStats() {
    const stats = await board.stats({ bucketSeconds: 60, buckets: 30 })
    showStats(stats.current)
    $('#board-chart').replaceChildren(activityChart(stats))
  }

  async function refresh() {
    try {
      const [b] = await Promise.all([board.board(), readStats()])
      showMeta(b)
      onBoard(b)
    } catch {
      // the next refresh tries again; the feed has its own error line
    }
  }

  /** The feed changed: read the counts again soon, one read at a time, at most one per NUDGE_MS. */
  async function nudge() {
    showCover()
    if (inFlight) return void (again = true)
    const wait = last + NUDGE_MS - Date.now()
    if (wait > 0) return void (soon ??= setTimeout(() => ((soon = null), nudge()), wait))
    inFlight = true
    last = Date.now()
    try {
      await readStats()
    } catch {
      // as refresh
    } finally {
      inFlight = false
      if (again) (again = false), nudge()
    }
  }

  return {
    refresh,
    showMeta,
    nudge,
    cover: showCover,
    start() {
      refresh()
      clearInterval(timer)
      timer = setInterval(() => document.visibilityState === 'visible' && refresh(), REFRESH_MS)
    },
  }
}
