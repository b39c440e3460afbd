import t from 'tap'
import { WireClient } from '../../client/src/index.js'
import { listeningBoard, recordingFetch, TOKEN } from './support.js'

// request(): publish, then the replies from the publish's own feed position with the ref filter.

t.test('request yields the direct replies, even those published before listening began, until the timeout', async (t) => {
  const { url } = await listeningBoard(t)
  const rec = recordingFetch()
  const agent = new WireClient({ url, token: TOKEN, fetch: rec.fetch })
  const helper = new WireClient({ url, token: 'helper-agent-token' })
  const other = (await helper.publish({ $type: 'request', text: 'another question' })).signal

  const req = await agent.request({ $type: 'request', $tags: ['gpu'], text: 'who has a GPU?' }, { timeout: 3000 })
  t.type(req.cursor, 'number', "the server reports the publish's feed position")
  // replies that land before the follow's first poll: the cursor makes them count
  const r1 = (await helper.publish({ $type: 'reply', $refId: req.signal.id, text: 'me' })).signal
  await helper.publish({ $type: 'reply', $refId: other.id, text: 'not for you' })
  await helper.publish({ $type: 'broadcast', text: 'unrelated' })
  const expected = [r1.id]
  const got: string[] = []
  const t0 = Date.now()
  for await (const reply of req) {
    got.push(reply.id)
    if (got.length === 1) {
      await helper.publish({ $type: 'reply', $refId: r1.id, text: 'a reply to the reply: not direct' })
      expected.push((await helper.publish({ $type: 'reply', $refId: req.signal.uri, text: 'me too' })).signal.id)
    }
  }
  const elapsed = Date.now() - t0
  t.same(got, expected, 'the direct replies, the early one and the live one, once each')
  t.ok(elapsed >= 2500, `the iteration ended with the timeout (${elapsed} ms), quietly`)
  const served = rec.pages.flat()
  t.same(served, expected, 'the server sent only the direct replies (the ref filter), each once')
})

t.test('request ends when its abort signal fires', async (t) => {
  const { wire } = await listeningBoard(t)
  const ctl = new AbortController()
  const req = await wire.request({ $type: 'request', text: 'anyone?' }, { timeout: 60_000, signal: ctl.signal })
  setTimeout(() => ctl.abort(), 300)
  const t0 = Date.now()
  for await (const _ of req) t.fail('no reply was published')
  t.ok(Date.now() - t0 < 10_000, 'ended by the abort, not the timeout')
  t.equal((await wire.get(req.signal.id)).signal.payload.text, 'anyone?')
})
