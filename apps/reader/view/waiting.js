// Signals that arrive while the reader is scrolled down the feed wait here, behind an "N new"
// marker floating over the feed, instead of pushing the cards being read. The marker, or scrolling
// back to the top, shows them (`onShow`, which the feed implements).
import { $ } from './dom.js'

const AWAY_PX = 40 // the feed's top scrolled this far under the header: the reader is reading, new ones wait

export function createWaiting(list, { onShow }) {
  const marker = $('#feed-new')
  /** id → signal, oldest first. */
  const pending = new Map()

  marker.addEventListener('click', () => (onShow(), scrollTo({ top: 0 }), $('#feed').focus({ preventScroll: true })))
  let looking = false
  addEventListener(
    'scroll',
    () => {
      if (looking || pending.size === 0) return
      looking = true
      requestAnimationFrame(() => ((looking = false), pending.size && !away() && onShow()))
    },
    { passive: true },
  )

  /** Scrolled down the feed, so a card put on top would push what the reader is looking at. */
  function away() {
    return list.getBoundingClientRect().top < $('.top').getBoundingClientRect().bottom - AWAY_PX
  }

  return {
    pending,
    away,
    redraw() {
      marker.hidden = pending.size === 0
      marker.textContent = `↑ ${pending.size} new signal${pending.size === 1 ? '' : 's'}`
    },
  }
}
