import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../helpers/services.js'
import { ADMIN_TOKEN, listeningBoard, TOKEN } from '../client/support.js'
import { wire } from './run.js'

// The `wire` command line as child processes of the built code, against a real board.

t.test('publish, get, thread, board and admin against a board', async (t) => {
  const { url } = await listeningBoard(t)
  const env = { WIRE_URL: url, WIRE_TOKEN: TOKEN, WIRE_ADMIN_TOKEN: ADMIN_TOKEN }
  const json = async (args: string[], input?: string) => {
    const r = await wire(args, env, input)
    t.equal(r.code, 0, `wire ${args.join(' ')} exits 0 ${r.err}`)
    return JSON.parse(r.out)
  }

  const root = (await json(['publish', '-t', 'request', '--tag', 'gpu', '--tag', 'Ask,now', '-f', 'n=3', '-f', 'who=me', 'who has a GPU?']))
    .signal
  t.same(root.tags, ['gpu', 'ask', 'now'], 'repeated and comma-separated tags')
  t.same(
    root.payload,
    { $type: 'request', $tags: ['gpu', 'ask', 'now'], text: 'who has a GPU?', n: 3, who: 'me' },
    'fields: JSON when it parses, else text',
  )
  const offer = (await json(['publish', '--ttl', '60', '-'], `{"$type":"offer","$refId":"${root.id}","price":3}`)).signal
  t.equal(offer.ttl, 60, 'a JSON body from stdin, flags on top')
  t.equal(offer.refId, root.id)
  const reply = (await json(['publish', '-t', 'reply', '--ref', offer.uri, 'deal'])).signal
  t.equal(reply.refId, offer.id, '--ref takes a sw:// URI')

  const got = await json(['get', root.id])
  t.same(
    got.replies.map((s: { id: string }) => s.id),
    [offer.id],
  )
  const tree = await wire(['thread', root.id], env)
  const lines = tree.out.trimEnd().split('\n')
  t.equal(lines.length, 3)
  t.match(lines[0], new RegExp(`^\\S.*request.*#gpu #ask #now.*who has a GPU\\?.*${root.id}$`), 'the root, not indented')
  t.match(lines[1], new RegExp(`^  \\S.*offer.*${offer.id} ↩ ${root.id}$`), 'its reply, two spaces in')
  t.match(lines[2], new RegExp(`^    \\S.*reply.*deal.*${reply.id}`), 'the reply to the reply, four')
  t.notMatch(tree.out, /\u001b\[/, 'no colour when the output is not a terminal')

  t.equal((await json(['admin', 'metadata', '--name', 'ops', '--types', 'broadcast,request,offer,reply'])).name, 'ops')
  const board = await wire(['board'], env)
  t.match(board.out, /^ops {2}sw:\/\//)
  t.match(board.out, /active signals: 3/)
  t.same((await json(['board', '--json'])).allowedSignalTypes, ['broadcast', 'request', 'offer', 'reply'])
  const rule = (await json(['admin', 'rules', 'add', 'deny', 'fp_00000000000000000000'])).rule
  t.same(
    (await json(['admin', 'rules'])).rules.map((r: { id: string }) => r.id),
    [rule.id],
  )
  t.same(await json(['admin', 'rules', 'remove', rule.id]), { ok: true })
  t.equal((await json(['admin', 'pin', reply.id])).signal.pinned, true)
  t.equal((await json(['admin', 'unpin', reply.id])).signal.pinned, false)
  t.same(await json(['admin', 'remove', reply.id]), { ok: true })

  const missing = await wire(['get', reply.id], env)
  t.equal(missing.code, 1, 'an error exits 1')
  t.match(missing.err, /^wire: not_found \(404\): /, 'with the protocol code and status')
  const noAdmin = await wire(['admin', 'rules'], { WIRE_URL: url })
  t.match(noAdmin.err, /unauthorized \(401\)/)
  const bad = await wire(['publish', '-'], env, '[1,2]')
  t.equal(bad.code, 1)
  t.match(bad.err, /one JSON object/)

  // JSON piped in without `-` is the signal, never dropped for an empty broadcast
  const piped = (await json(['publish', '--tag', 'piped'], '{"$type":"offer","price":3}\n')).signal
  t.match(piped, { type: 'offer', tags: ['piped'], payload: { $type: 'offer', price: 3 } }, 'piped JSON is read without -')
  const nothing = (await json(['publish', '-f', 'n=1'], '')).signal
  t.match(nothing, { type: 'broadcast', payload: { n: 1 } }, 'empty input: the options alone')
  const text = await wire(['publish'], env, 'plain words\n')
  t.equal(text.code, 1, 'piped input that is not JSON is refused, not lost')
  t.match(text.err, /standard input is not JSON/)
})

t.test('--help on every command', async (t) => {
  const commands = [
    [],
    ['publish'],
    ['follow'],
    ['get'],
    ['thread'],
    ['board'],
    ['admin'],
    ['admin', 'metadata'],
    ['admin', 'rules'],
    ['admin', 'rules', 'add'],
    ['admin', 'rules', 'remove'],
    ['admin', 'pin'],
    ['admin', 'unpin'],
    ['admin', 'remove'],
    ['migrate'],
    ['check-config'],
    ['backup'],
    ['restore'],
    ['move'],
  ]
  const results = await Promise.all(commands.map((c) => wire([...c, '--help'])))
  commands.forEach((c, i) => {
    t.equal(results[i]!.code, 0, `wire ${c.join(' ')} --help`)
    t.match(results[i]!.out, new RegExp(`^Usage: wire${c.length ? ` ${c.join(' ')}` : ''} `))
  })
  const r = await wire(['--help'], {}, undefined, projectPath('bin/wire.js'))
  t.match(r.out, /^Usage: wire /, 'bin/wire.js runs the same command line')
  const unknown = await wire(['publsh'])
  t.not(unknown.code, 0, 'an unknown command fails')
})

t.test('migrate applies the migrations to the configured database and exits', async (t) => {
  const schema = uniqueSchema('cli')
  t.teardown(() => dropSchema(schema))
  const env = { DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema }
  const first = await wire(['migrate'], env)
  t.equal(first.code, 0, first.err)
  t.match(first.out, new RegExp(`^applied 0001_.* to schema ${schema}`))
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  const rows = (await c.query(`select name from "${schema}".schema_migrations`)).rows
  await c.end()
  t.ok(rows.length > 0 && first.out.includes(rows[0].name), 'every applied file is recorded')
  const again = await wire(['migrate'], env)
  t.equal(again.code, 0)
  t.equal(again.out.trim(), `schema ${schema} is up to date`)
  const down = await wire(['migrate'], { DATABASE_URL: 'postgres://root@127.0.0.1:1/test', WIRE_PG_SCHEMA: schema })
  t.equal(down.code, 1, 'an unreachable database exits 1')
  t.match(
    down.err,
    new RegExp(`^wire: cannot migrate schema ${schema} of 127\\.0\\.0\\.1:1/test: .*ECONNREFUSED`),
    'one clear line naming the database',
  )
  t.notMatch(down.err, /\n\s+at /, 'no stack trace')
  t.equal(down.err.trim().split('\n').length, 1)
})

t.test('check-config validates the environment and the board file without starting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-cli-'))
  const good = join(dir, 'board.json')
  writeFileSync(good, JSON.stringify({ name: 'lab', allowedSignalTypes: ['broadcast'] }))
  const ok = await wire(['check-config'], { DATABASE_URL: 'postgres://nowhere.invalid/x', WIRE_CONFIG: good })
  t.equal(ok.code, 0, 'a database that is not there is not contacted')
  t.match(ok.out, /^configuration OK: PostgreSQL, schema public; in-process wake bus; local identity mode; admin API off/)
  t.match(ok.out, /board file .* OK \(board "lab"\)/)
  const none = await wire(['check-config'], { WIRE_CONFIG: join(dir, 'absent.json') })
  t.equal(none.code, 0)
  t.match(none.out, /no board file .* named "main"/)

  const badEnv = await wire(['check-config'], { SERVER_PORT: 'eighty', SIGNAL_DEFAULT_TTL_SECONDS: '5', WIRE_CONFIG: good })
  t.equal(badEnv.code, 1)
  t.match(badEnv.err, /SERVER_PORT/)
  t.match(badEnv.err, /SIGNAL_DEFAULT_TTL_SECONDS/, 'every bad variable is named')
  t.match(badEnv.err, /SERVER_PORT: must be a whole number from 0 to 65535\n/, 'in plain words: the setting and what it expects')
  t.match(badEnv.err, /SIGNAL_DEFAULT_TTL_SECONDS: must be a whole number from 10 to 86400\n/)
  t.notMatch(badEnv.err, /NaN|received|expected number|Invalid input/, "never zod's own wording")
  const more = await wire(['check-config'], { LOG_LEVEL: 'loud', WIRE_PG_NOTIFY: 'yes', PUBLIC_WIRE_URL: 'board', WIRE_CONFIG: good })
  t.match(more.err, /LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent/)
  t.match(more.err, /WIRE_PG_NOTIFY: must be 0 or 1/)
  t.match(more.err, /PUBLIC_WIRE_URL: must be a URL such as https:\/\/host\.example/)
  t.notMatch(more.err, /Invalid option|Invalid URL|expected one of/)
  const broken = join(dir, 'broken.json')
  writeFileSync(broken, '{"name": "lab", "colour": 3}')
  const badFile = await wire(['check-config'], { WIRE_CONFIG: broken })
  t.equal(badFile.code, 1)
  t.match(badFile.err, /broken\.json/)
  writeFileSync(broken, '{not json')
  t.equal((await wire(['check-config'], { WIRE_CONFIG: broken })).code, 1, 'unreadable JSON exits 1')
})
