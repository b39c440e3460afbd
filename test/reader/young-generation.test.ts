import { readFileSync } from 'node:fs'
import t from 'tap'
import { semiSpaceChosen } from '../../libs/shared/runtime/index.js'
import { fleetSchema, startRole } from '../helpers/fleet.js'
import { TEST_DATABASE_URL } from '../helpers/services.js'

// A reader caps V8's young generation itself (READER_SEMI_SPACE_MB): it runs itself again, same
// pid, with --max-semi-space-size, unless the operator chose a size in NODE_OPTIONS. Built code,
// real processes; /proc shows the command line the process runs with.

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
const newSpaceBytes = async (url: string) =>
  Number(/nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/.exec(await (await fetch(`${url}/metrics`)).text())?.[1])

t.test('an operator’s semi-space, in node’s flags or NODE_OPTIONS, is theirs', async (t) => {
  t.equal(semiSpaceChosen([], undefined), false)
  t.equal(semiSpaceChosen([], '--max-old-space-size=512'), false, 'another flag')
  t.equal(semiSpaceChosen([], '--enable-source-maps --max-semi-space-size=16'), true)
  t.equal(semiSpaceChosen([], '"--import=file:///x.mjs" "--max-semi-space-size=16"'), true, 'quoted, as tools write it')
  t.equal(semiSpaceChosen(['--max-semi-space-size', '8'], undefined), true)
  t.equal(semiSpaceChosen(['--max-semi-space-size-x=8'], undefined), false, 'a longer name is another flag')
})

t.test('a reader runs itself with its young generation capped, on the same pid; NODE_OPTIONS’ size or 0 leaves node’s', async (t) => {
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema, PUBLIC_WIRE_HOST: 'localhost:4000' }
  const writer = await startRole(t, 'writer', env) // migrates the schema
  const capped = await startRole(t, 'reader', { ...env, READER_SEMI_SPACE_MB: '2' })
  t.ok(cmdline(capped.proc.child.pid!).includes('--max-semi-space-size=2'), 'the process we started runs with the flag')
  t.equal((await fetch(`${capped.url}/sw/signals`)).status, 200, 'and serves reads')
  t.ok((await newSpaceBytes(capped.url)) <= 2 * 2 * 1024 * 1024, 'its new space is at most two 2 MB semi-spaces')
  const operators = await startRole(t, 'reader', {
    ...env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=8`.trim(),
  })
  t.notOk(
    cmdline(operators.proc.child.pid!).some((a) => a.startsWith('--max-semi-space-size')),
    'NODE_OPTIONS chose: not run again',
  )
  t.ok((await newSpaceBytes(operators.url)) <= 2 * 8 * 1024 * 1024, "the operator's 8 MB holds")
  const off = await startRole(t, 'reader', { ...env, READER_SEMI_SPACE_MB: '0' })
  t.notOk(
    cmdline(off.proc.child.pid!).some((a) => a.startsWith('--max-semi-space-size')),
    '0: node’s default',
  )
  for (const r of [capped, operators, off, writer]) await r.stop()
})
