import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { NODE } from '../cli/run.js'
import { startListening } from './listen.js'

// docs/agents.md's A2A SDK example, run as written (its imports pointed at this checkout's
// @a2a-js/sdk) against a board on a real port: where the SDK client puts results and states.

const block = [...readFileSync(projectPath('docs/agents.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .find((b) => b.includes('ClientFactory'))

t.test("the A2A SDK example prints the published signal, the read, and the refusal's code", async (t) => {
  t.ok(block, 'docs/agents.md has the example')
  const { s, url } = await startListening(t)
  const dir = mkdtempSync(join(tmpdir(), 'wire-a2a-doc-'))
  const file = join(dir, 'a2a.mjs')
  const code = block!
    .replaceAll(`from '@a2a-js/sdk'`, `from '${import.meta.resolve('@a2a-js/sdk')}'`)
    .replaceAll(`from '@a2a-js/sdk/client'`, `from '${import.meta.resolve('@a2a-js/sdk/client')}'`)
  writeFileSync(file, code)
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const p = spawn(NODE, [file], { env: { ...process.env, WIRE_URL: url, WIRE_TOKEN: 'a2a-docs-token' } })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.stderr.on('data', (d) => (out += d))
    p.on('close', (c) => resolve({ code: c, out }))
  })
  t.equal(run.code, 0, run.out)
  const lines = run.out.trimEnd().split('\n')
  t.equal(lines.length, 3, run.out)
  const id = /^true (\w{20})$/.exec(lines[0]!)?.[1]
  t.ok(id, `completed, with the signal's id: ${lines[0]}`)
  const page = await s.read('tag=hello')
  t.same(
    page.signals.map((x: { id: string }) => x.id),
    [id],
    'the signal the example published is on the feed',
  )
  t.equal(lines[1], `[ 'hi from A2A' ] ${page.nextCursor}`, 'the read: signals and nextCursor')
  t.equal(lines[2], 'true unauthorized', 'a refused publish: a failed task carrying the protocol code')
})
