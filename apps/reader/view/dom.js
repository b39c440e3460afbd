// Building DOM without markup: text is always a text node, so nothing a signal carries becomes HTML.

const SVG = 'http://www.w3.org/2000/svg'

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'class') el.setAttribute('class', v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c))
  return el
}

/** An HTML element: `h('p', { class: 'x' }, 'text', child)`. Strings become text nodes. */
export const h = (tag, attrs, ...children) => fill(document.createElement(tag), attrs, children)

/** An SVG element, for the activity chart. */
export const s = (tag, attrs, ...children) => fill(document.createElementNS(SVG, tag), attrs, children)

export const $ = (sel, root = document) => root.querySelector(sel)

/** Says something to the page's live region (and to screen readers). */
export function announce(text, kind = 'info') {
  const el = $('#notice')
  el.textContent = text
  el.dataset.kind = kind
}
