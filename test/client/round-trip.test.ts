import t from 'tap'
import { parseSignalUri, WireClient, WireError, type EmittedSignal } from '../../client/src/index.js'
import { EMITTED_SIGNAL_FIELDS } from '../../libs/shared/domain/index.js'
import { collect, listeningBoard, recordingFetch, TOKEN } from './support.js'

// The client against the single-process board on a real port: every call, and follow.

t.test('publish, get, thread, read, board, discover', async (t) => {
  const { s, wire } = await listeningBoard(t)
  const root = await wire.publish({ $type: 'request', $tags: ['Ask'], text: 'who has a GPU?' })
  t.equal(root.ok, true)
  t.same(Object.keys(root.signal), [...EMITTED_SIGNAL_FIELDS], "the emitted signal has the shared type's fields, in order")
  t.same(root.signal.tags, ['ask'])
  t.same(parseSignalUri(root.signal.uri), { authority: s.cfg.authority, id: root.signal.id }, 'uri parses back to the id')
  const reply = await wire.publish({ $type: 'reply', $refId: root.signal.uri, text: 'me' })
  const deeper = await wire.publish({ $type: 'reply', $refId: reply.signal.id, text: 'thanks' })

  const got = await wire.get(root.signal.id)
  t.equal(got.signal.id, root.signal.id)
  t.same(
    got.replies.map((s) => s.id),
    [reply.signal.id],
    'get: the direct replies',
  )
  t.equal((await wire.get(root.signal.uri)).signal.id, root.signal.id, 'get by sw:// URI')
  t.same(
    (await wire.thread(root.signal.id)).signals.map((s) => s.id),
    [root.signal.id, reply.signal.id, deeper.signal.id],
    'thread: root and descendants',
  )

  const page = await wire.read({ tag: ['ask', 'other'] })
  t.same(
    page.signals.map((s) => s.id),
    [root.signal.id],
    'read with several tags',
  )
  t.type(page.nextCursor, 'number')
  t.same(
    (await wire.read({ type: 'reply', limit: 1 })).signals.map((s) => s.id),
    [deeper.signal.id],
    'read with type and limit',
  )

  const board = await wire.board()
  t.equal(board.authority, s.cfg.authority)
  t.equal(board.stats.activeSignals, 3)
  const doc = await wire.discover()
  t.equal(doc.protocol, 'wire')
  t.equal(doc.version, '1')
})

t.test('errors are WireError with the protocol code and status', async (t) => {
  const { url, wire } = await listeningBoard(t, { env: { PUBLISH_RATE_LIMIT_MAX: '2' } })
  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => (e instanceof WireError ? { code: e.code, status: e.status } : { other: String(e) }),
    )
  t.same(await codeOf(wire.publish({ $type: '' })), { code: 'invalid_request', status: 400 })
  t.same(await codeOf(wire.publish({ $type: 'reply' })), { code: 'reply_requires_ref', status: 400 })
  t.same(await codeOf(new WireClient({ url }).publish({ $type: 'broadcast' })), { code: 'unauthorized', status: 401 }, 'no token')
  t.same(await codeOf(wire.get('AAAAAAAAAAAAAAAAAAAA')), { code: 'not_found', status: 404 })
  t.same(await codeOf(new WireClient({ url, adminToken: 'wrong-admin-token' }).admin.rules()), { code: 'unauthorized', status: 401 })
  await wire.publish({ $type: 'broadcast', n: 1 })
  await wire.publish({ $type: 'broadcast', n: 2 })
  const limited = await wire.publish({ $type: 'broadcast', n: 3 }).catch((e: unknown) => e)
  t.ok(limited instanceof WireError && limited.code === 'rate_limited' && limited.status === 429, 'over the rate limit: rate_limited 429')
  t.ok((limited as WireError).retryAfter! >= 1, 'with retryAfter from the Retry-After header')
  const refused = await new WireClient({ url: 'http://127.0.0.1:1' }).board().catch((e: unknown) => e)
  t.ok(refused instanceof WireError && refused.status === 0 && refused.code === 'unavailable', 'no answer at all: unavailable, status 0')
})

t.test('admin calls', async (t) => {
  const { wire } = await listeningBoard(t)
  const meta = await wire.admin.patchMetadata({ name: 'ops', allowedSignalTypes: ['broadcast', 'reply'] })
  t.equal(meta.name, 'ops')
  t.same((await wire.admin.metadata()).allowedSignalTypes, ['broadcast', 'reply'])
  const rule = await wire.admin.addRule('deny', 'fp_00000000000000000000')
  t.same(
    (await wire.admin.rules()).map((r) => r.id),
    [rule.id],
  )
  await wire.admin.removeRule(rule.id)
  t.same(await wire.admin.rules(), [])
  const s = (await wire.publish({ $type: 'broadcast', $ttl: 10 })).signal
  t.equal((await wire.admin.pin(s.id)).pinned, true)
  t.equal((await wire.admin.unpin(s.uri)).pinned, false, 'unpin by sw:// URI')
  await wire.admin.remove(s.id)
  t.equal(await wire.get(s.id).catch((e: WireError) => e.code), 'not_found', 'removed')
})

t.test('follow: every signal once, in order, live; the cursor resumes exactly', async (t) => {
  const { s, url, wire } = await listeningBoard(t)
  const before = (await wire.publish({ $type: 'broadcast', n: 0 })).signal
  const rec = recordingFetch()
  const ctl = new AbortController()
  const cursors: number[] = []
  const follower = new WireClient({ url, token: TOKEN, fetch: rec.fetch }).follow(
    { type: 'broadcast' },
    { signal: ctl.signal, onCursor: (c) => void cursors.push(c) },
  )
  const c = collect(follower)
  await c.until(1)
  t.same(
    c.got.map((x) => x.id),
    [before.id],
    'without a cursor: starts with the newest page',
  )
  const acked: string[] = []
  for (let i = 1; i <= 5; i++) {
    acked.push((await wire.publish({ $type: 'broadcast', n: i })).signal.id)
    await wire.publish({ $type: 'offer', n: i }) // filtered out
  }
  await c.until(6)
  t.same(
    c.got.map((x) => x.id),
    [before.id, ...acked],
    'every matching signal, once, in publish order',
  )
  t.ok(cursors.length >= 2 && cursors.every((x, i) => i === 0 || x >= cursors[i - 1]!), 'onCursor after every page, never going back')
  t.equal(follower.cursor, cursors.at(-1), 'the follower exposes the same cursor')
  t.same(
    rec.pages.flat(),
    c.got.map((x) => x.id),
    'the server sent each once: nothing for dedupe to hide',
  )
  ctl.abort()
  await c.done
  t.pass('abort ends the iteration quietly, mid long-poll')

  const resumeAt = follower.cursor!
  const later = (await wire.publish({ $type: 'broadcast', n: 6 })).signal
  const ctl2 = new AbortController()
  const c2 = collect(wire.follow({ type: 'broadcast' }, { cursor: resumeAt, signal: ctl2.signal }))
  await c2.until(1)
  t.same(
    c2.got.map((x) => x.id),
    [later.id],
    'resuming from the kept cursor: only what came after',
  )
  ctl2.abort()
  await c2.done
  t.ok(s.logs.length > 0)
})

t.test("follow from: 'head' hands out only what is published after it started, and reports the head", async (t) => {
  const { wire } = await listeningBoard(t)
  for (let i = 0; i < 3; i++) await wire.publish({ $type: 'request', n: i })
  const feedHead = (await wire.read({ limit: 1 })).nextCursor
  const cursors: number[] = []
  let head: () => void
  const atHead = new Promise<void>((r) => (head = r))
  const ctl = new AbortController()
  const c = collect(wire.follow({ type: 'request' }, { from: 'head', signal: ctl.signal, onCursor: (x) => (cursors.push(x), head()) }))
  await atHead
  const fresh = (await wire.publish({ $type: 'request', n: 3 })).signal
  await c.until(1)
  t.same(
    c.got.map((x) => x.id),
    [fresh.id],
    'none of the three already there',
  )
  t.equal(cursors[0], feedHead, 'onCursor got the head it started from')
  ctl.abort()
  await c.done
})

t.test('follow never yields expired signals', async (t) => {
  // no in-memory tail: the backdated rows are judged as they are now in the database
  const { s, wire } = await listeningBoard(t, { env: { READER_TAIL_SIZE: '0' } })
  const gone = (await wire.publish({ $type: 'broadcast', text: 'expired' })).signal
  const kept = (await wire.publish({ $type: 'broadcast', text: 'active' })).signal
  const pinned = (await wire.publish({ $type: 'broadcast', text: 'pinned' })).signal
  await wire.admin.pin(pinned.id)
  await s.infra.primary.query(`update "${s.schema}".signals set expires_at = now() - interval '1 minute' where id = any($1)`, [
    [gone.id, pinned.id],
  ])
  const ctl = new AbortController()
  const c = collect(wire.follow({}, { cursor: 0, signal: ctl.signal }))
  await c.until(2)
  const more = (await wire.publish({ $type: 'broadcast', text: 'after' })).signal
  await c.until(3)
  ctl.abort()
  await c.done
  t.same(
    c.got.map((x: EmittedSignal) => x.payload.text),
    ['active', 'pinned', 'after'],
    'the backdated one is skipped; a pinned one is not expired',
  )
  t.notOk(c.got.some((x) => x.id === gone.id))
  t.ok(kept && more)
})
