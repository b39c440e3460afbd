import type { Group, Setting } from './kinds.js'
import { cli, SERVER_GROUPS } from './settings/index.js'

// The settings tables of the README and docs/cli.md, generated from the declarations
// (`npm run settings:readme` writes them; test/config/settings-table.test.ts checks the committed ones).

export interface SettingsTable {
  /** The file, relative to the repository. */
  file: string
  /** Its region: between `<!-- NAME:start … -->` and `<!-- NAME:end -->`. */
  marker: string
  groups: readonly Group[]
}

export const SETTINGS_TABLES: readonly SettingsTable[] = [
  { file: 'README.md', marker: 'settings', groups: SERVER_GROUPS },
  { file: 'docs/cli.md', marker: 'cli-settings', groups: [cli] },
]

function cell(name: string, text: string): string {
  if (/[|\n]/.test(text)) throw new Error(`${name}: a table cell cannot hold "|" or a line break: ${text}`)
  return text
}

function defaultOf(s: Setting): string {
  if (s.shown !== undefined) return s.shown
  return s.default === undefined ? 'unset' : `\`${s.default}\``
}

const row = (name: string, s: Setting) => `| \`${name}\` | ${cell(name, defaultOf(s))} | ${cell(name, `${s.star ? '★ ' : ''}${s.about}`)} |`

/** The markdown of some groups: each under its bold title (when the table has more than one), one row per setting. */
function settingsTable(groups: readonly Group[]): string {
  return groups
    .map((g) => {
      const title = groups.length > 1 ? [`**${g.title}**${g.note ? ` ${g.note}` : ''}`, ''] : []
      const rows = Object.entries(g.settings).map(([name, s]) => row(name, s))
      return [...title, '| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n')
    })
    .join('\n\n')
}

/** `text` with the region of `t` replaced by its generated table; throws when the markers are missing. */
export function withSettingsTable(text: string, t: SettingsTable): string {
  const region = new RegExp(`(<!-- ${t.marker}:start[^>]*-->\\n)[\\s\\S]*?(\\n<!-- ${t.marker}:end -->)`)
  if (!region.test(text)) throw new Error(`${t.file}: no <!-- ${t.marker}:start --> … <!-- ${t.marker}:end --> region`)
  return text.replace(region, (_, start: string, end: string) => `${start}\n${settingsTable(t.groups)}\n${end}`)
}
