import t from 'tap'
import { startStack } from '../helpers/stack.js'

t.test('a published signal is read back verbatim', async (t) => {
  const s = await startStack(t)
  const pub = await s.publish({ $type: 'broadcast', text: 'hi' })
  t.equal(pub.statusCode, 200)
  const page = await s.read()
  t.equal(page.signals.length, 1)
  t.same(page.signals[0].payload, { $type: 'broadcast', text: 'hi', $tags: [] })
})
