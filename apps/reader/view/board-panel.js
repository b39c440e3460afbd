// The board panel: name, description, allowed types, live counts and the activity chart.
import { $, h } from './dom.js'
import { activityChart } from './chart.js'

const REFRESH_MS = 15_000

export function createBoardPanel(board, { onBoard }) {
  let timer = null

  function showMeta(b) {
    $('#board-name').textContent = b.name
    document.title = `${b.name} · Wire viewer`
    $('#board-title').textContent = b.name
    $('#board-uri').textContent = b.uri
    $('#board-description').textContent = b.description ?? 'No description.'
    const types = b.allowedSignalTypes
    $('#board-types').replaceChildren(...(types?.length ? types.map((t) => h('li', null, h('code', null, t))) : [h('li', null, 'any type')]))
  }

  function showStats(current) {
    $('#stat-signals').textContent = String(current.activeSignals)
    $('#stat-identities').textContent = String(current.activeIdentities)
    $('#stat-pollers').textContent = String(current.recentPollers)
  }

  async function refresh() {
    try {
      const [b, stats] = await Promise.all([board.board(), board.stats({ bucketSeconds: 60, buckets: 30 })])
      showMeta(b)
      showStats(stats.current)
      $('#board-chart').replaceChildren(activityChart(stats))
      onBoard(b)
    } catch {
      // the next refresh tries again; the feed has its own error line
    }
  }

  return {
    refresh,
    showMeta,
    start() {
      refresh()
      clearInterval(timer)
      timer = setInterval(() => document.visibilityState === 'visible' && refresh(), REFRESH_MS)
    },
  }
}
