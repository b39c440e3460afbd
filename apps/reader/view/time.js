// Relative times: "12 s ago", "in 3 h".

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
]

export function span(ms) {
  const abs = Math.abs(ms)
  for (const [unit, size] of UNITS) if (abs >= size) return `${Math.floor(abs / size)} ${unit}`
  return '0 s'
}

export const ago = (iso, now = Date.now()) => (now - Date.parse(iso) < 5000 ? 'just now' : `${span(now - Date.parse(iso))} ago`)

export const left = (iso, now = Date.now()) => {
  const ms = Date.parse(iso) - now
  return ms <= 0 ? 'expired' : `${span(ms)} left`
}
