// Operator mode: the admin token typed into the page, kept in this tab's memory (or its session
// storage when asked), never in a cookie, the URL or local storage.
import { $, announce, h } from './dom.js'

const KEY = 'wire.adminToken'

/** The tab's session storage, or null where the page has none (sandboxed at an opaque origin, as through an aggregator's proxy). */
function session() {
  try {
    return sessionStorage
  } catch {
    return null
  }
}

export function createOperator(board, { onBoard, onSignal, onRemoved }) {
  const section = $('#operator')
  const toggle = $('#operator-toggle')
  const login = $('#op-login')
  const meta = $('#op-meta')
  const ruleForm = $('#op-rule')
  let admin = null

  const setOpen = (open) => {
    section.hidden = !open
    toggle.setAttribute('aria-expanded', String(open))
  }
  toggle.addEventListener('click', () => {
    setOpen(section.hidden)
    if (!section.hidden) (admin ? meta.elements.namedItem('name') : login.elements.namedItem('token')).focus()
  })

  function fillMeta(b) {
    meta.elements.namedItem('name').value = b.name ?? ''
    meta.elements.namedItem('description').value = b.description ?? ''
    meta.elements.namedItem('types').value = (b.allowedSignalTypes ?? []).join(', ')
  }

  async function showRules() {
    const rules = await admin.rules()
    $('#op-rules').replaceChildren(
      ...(rules.length
        ? rules.map((r) =>
            h(
              'li',
              null,
              h('span', { class: `rule ${r.ruleType}` }, r.ruleType),
              ' ',
              h('code', null, r.identityId),
              ' ',
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger small',
                  'data-rule': r.id,
                  'aria-label': `Remove the ${r.ruleType} rule for ${r.identityId}`,
                },
                'Remove',
              ),
            ),
          )
        : [h('li', { class: 'empty' }, 'No rules: anyone with a token may publish.')]),
    )
  }

  async function enter(token, remember) {
    const candidate = board.admin(token)
    const b = await candidate.board() // 401 for a wrong token, 501 when the board has none
    admin = candidate
    if (remember) session()?.setItem(KEY, token)
    document.body.classList.add('op-mode')
    login.hidden = true
    $('#op-panel').hidden = false
    fillMeta(b)
    await showRules()
  }

  function leave() {
    admin = null
    session()?.removeItem(KEY)
    document.body.classList.remove('op-mode')
    login.reset()
    login.hidden = false
    $('#op-panel').hidden = true
    announce('Left operator mode; the token is forgotten.')
  }

  const guard = (fn) => async (e) => {
    e?.preventDefault?.()
    try {
      await fn(e)
    } catch (err) {
      announce(`${err.code ?? 'error'}: ${err.message}`, 'error')
    }
  }

  login.addEventListener(
    'submit',
    guard(async () => {
      const f = login.elements
      await enter(f.namedItem('token').value.trim(), f.namedItem('remember').checked)
      announce('Operator mode: pin, remove, metadata and rules are available.')
    }),
  )
  $('#op-leave').addEventListener('click', leave)

  meta.addEventListener(
    'submit',
    guard(async () => {
      const f = meta.elements
      const types = f
        .namedItem('types')
        .value.split(',')
        .map((t) => t.trim())
        .filter(Boolean)
      const b = await admin.patchBoard({
        name: f.namedItem('name').value.trim() || null,
        description: f.namedItem('description').value.trim() || null,
        allowedSignalTypes: types.length ? types : null,
      })
      fillMeta(b)
      onBoard(b)
      announce('Board metadata saved.')
    }),
  )

  ruleForm.addEventListener(
    'submit',
    guard(async () => {
      const f = ruleForm.elements
      const rule = await admin.addRule(f.namedItem('ruleType').value, f.namedItem('identityId').value.trim())
      f.namedItem('identityId').value = ''
      await showRules()
      announce(`Rule added: ${rule.ruleType} ${rule.identityId}.`)
    }),
  )
  $('#op-rules').addEventListener(
    'click',
    guard(async (e) => {
      const id = e.target.closest('button[data-rule]')?.dataset.rule
      if (!id) return
      await admin.removeRule(id)
      await showRules()
      announce('Rule removed.')
    }),
  )

  const saved = session()?.getItem(KEY)
  if (saved) enter(saved, true).catch(() => session()?.removeItem(KEY))

  return {
    /** pin, unpin or remove, from a card's button. */
    act: guard(async ({ action, id }) => {
      if (!admin) return
      if (action === 'remove') {
        if (!confirm('Remove this signal from the board for everyone?')) return
        await admin.remove(id)
        onRemoved(id)
        announce('Signal removed.')
      } else {
        const s = await admin[action](id)
        onSignal(s)
        announce(action === 'pin' ? 'Signal pinned: it stays past its expiry.' : 'Signal unpinned.')
      }
    }),
  }
}
