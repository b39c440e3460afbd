import { readFileSync } from 'node:fs'
import t from 'tap'
import { readArgsShape } from '../../apps/agents/read-args.js'
import { projectPath } from '../../libs/shared/paths.js'

// docs/agents.md's tool table lists every parameter the MCP tool read_signals takes, and the docs
// name the payload keys the viewer reads a display name from.

t.test('the read_signals row names every parameter of the tool', async (t) => {
  const row =
    readFileSync(projectPath('docs/agents.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `read_signals` |')) ?? ''
  const missing = Object.keys(readArgsShape).filter((p) => !row.includes(`\`${p}\``))
  t.same(missing, [], 'none left out')
})

t.test('the display-name keys the viewer reads are documented where agents and protocol readers look', async (t) => {
  const card = readFileSync(projectPath('apps/reader/view/signal-card.js'), 'utf8')
  const keys = JSON.parse((/const SELF_NAMES = (\[[^\]]*\])/.exec(card)?.[1] ?? '[]').replace(/'/g, '"')) as string[]
  t.ok(keys.length >= 3, `the viewer reads ${keys.join(', ')}`)
  for (const doc of ['docs/protocol.md', 'docs/agents.md']) {
    const text = readFileSync(projectPath(doc), 'utf8')
    t.same(
      keys.filter((k) => !text.includes(`\`${k}\``)),
      [],
      `${doc} names each`,
    )
  }
})
