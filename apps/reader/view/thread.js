// A thread as a tree in a dialog: the root and every reply under its parent; new replies arrive live.
import { $, h } from './dom.js'
import { signalCard, tick } from './signal-card.js'

const MAX_UP = 32 // how far up a reply chain to look for the root
const MAX_NODES = 2000 // the server sends at most 1000; live replies add to it while the thread is open

export function createThread(board, { onClose }) {
  const dialog = $('#thread')
  const body = $('#thread-body')
  let ctrl = null
  /** id → the <ol> of its replies */
  let replies = new Map()

  function place(s, fresh) {
    if (replies.has(s.id)) return false
    const parent = s.refId ? replies.get(s.refId) : body.querySelector('ol.tree')
    if (!parent) return false
    const kids = h('ol', { class: 'tree' })
    parent.append(h('li', { class: fresh ? 'fresh' : null }, signalCard(s, { inThread: true }), kids))
    replies.set(s.id, kids)
    return true
  }

  async function rootOf(id, signal) {
    let cur = (await board.get(id)).signal
    for (let i = 0; cur.refId && i < MAX_UP && !signal.aborted; i++) {
      const up = await board.get(cur.refId).catch(() => null)
      if (!up) break // the parent expired away: show what is left
      cur = up.signal
    }
    return cur.id
  }

  /** Opens the thread of `id`; `live: false` (static mode) shows it as it is and follows nothing. */
  async function open(id, { live = true } = {}) {
    ctrl?.abort()
    ctrl = new AbortController()
    const { signal } = ctrl
    replies = new Map()
    body.replaceChildren(h('p', { class: 'empty' }, 'Loading the thread…'))
    dialog.dataset.state = 'loading'
    if (!dialog.open) dialog.showModal()
    try {
      const head = (await board.read({ limit: 1 })).nextCursor // replies after this point come from the follower
      const root = await rootOf(id, signal)
      const signals = await board.thread(root)
      if (signal.aborted) return
      body.replaceChildren(h('ol', { class: 'tree root' }))
      for (const s of signals) place(s, false) // oldest first: parents before their replies
      body.querySelector(`[data-id="${CSS.escape(id)}"]`)?.classList.add('current')
      $('#thread-title').textContent = `Thread · ${signals.length} signal${signals.length === 1 ? '' : 's'}`
      dialog.dataset.state = live ? 'live' : 'static'
      if (!live) return
      for await (const s of board.follow({}, { cursor: head, signal })) {
        if (signal.aborted) break // another thread opened meanwhile
        if (replies.size < MAX_NODES && place(s, true)) $('#thread-title').textContent = `Thread · ${replies.size} signals`
      }
    } catch (err) {
      if (signal.aborted) return
      dialog.dataset.state = 'error'
      body.replaceChildren(
        h(
          'p',
          { class: 'empty', role: 'alert' },
          err.code === 'not_found' ? 'This thread is gone (removed or expired).' : `Could not load the thread: ${err.message}`,
        ),
      )
    }
  }

  function close() {
    ctrl?.abort()
    if (dialog.open) dialog.close()
  }

  dialog.addEventListener('close', () => (ctrl?.abort(), onClose()))
  $('#thread-close').addEventListener('click', close)

  return {
    open,
    close,
    isOpen: () => dialog.open,
    tick: (now) => tick(body, now),
    /** A signal changed or left (operator action): redraw or drop it here too. */
    update(s) {
      const card = body.querySelector(`[data-id="${CSS.escape(s.id)}"]`)
      card?.replaceWith(signalCard(s, { inThread: true }))
    },
    drop(id) {
      body.querySelector(`[data-id="${CSS.escape(id)}"]`)?.classList.add('removed')
    },
  }
}
