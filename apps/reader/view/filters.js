// The filter form: type, tag (type-ahead from /sw/tags), origin and free text.
import { $, h } from './dom.js'
import { FILTERS } from './url-state.js'

const COMMON_TYPES = ['broadcast', 'offer', 'request', 'reply']

function debounce(fn, ms) {
  let t
  return (...a) => (clearTimeout(t), (t = setTimeout(() => fn(...a), ms)))
}

/** Wires the form; `onChange(filters)` runs when the person stops typing or submits. */
export function createFilters(board, onChange) {
  const form = $('#filters')
  const field = (k) => form.elements.namedItem(k)
  const values = () => {
    const out = {}
    for (const k of FILTERS) {
      const v = field(k).value.trim()
      if (v) out[k] = v
    }
    return out
  }
  let last = ''
  const emit = () => {
    const v = values()
    const key = JSON.stringify(v)
    if (key !== last) (last = key), onChange(v)
  }
  const soon = debounce(emit, 350)
  form.addEventListener('input', soon)
  form.addEventListener('change', emit)
  form.addEventListener('submit', (e) => (e.preventDefault(), emit()))
  form.addEventListener('reset', () => setTimeout(emit)) // after the browser cleared the fields

  const tagList = $('#tag-options')
  const suggest = debounce(async () => {
    const prefix = field('tag').value.trim().toLowerCase()
    const tags = await board.tags(prefix || undefined).catch(() => [])
    tagList.replaceChildren(...tags.map((t) => h('option', { value: t.tag }, `${t.count} active`)))
  }, 150)
  field('tag').addEventListener('input', suggest)
  field('tag').addEventListener('focus', suggest)

  return {
    /** Puts filters (from the URL) into the form without emitting. */
    set(filters) {
      for (const k of FILTERS) field(k).value = filters[k] ?? ''
      last = JSON.stringify(values())
    },
    /** One filter changed from elsewhere (a click on a tag, a type or an origin). */
    apply(k, v) {
      field(k).value = v
      emit()
    },
    setTypes(allowed) {
      const types = allowed?.length ? allowed : COMMON_TYPES
      $('#type-options').replaceChildren(...types.map((t) => h('option', { value: t })))
    },
  }
}
