import t from 'tap'
import { relativeTime, signalLine, threadTree } from '../../apps/cli/format.js'
import type { EmittedSignal } from '../../client/src/index.js'

// What a person sees at a terminal: colour, relative times, the thread tree.

const at = Date.parse('2030-01-01T12:00:00.000Z')
const sig = (id: string, o: Partial<EmittedSignal> = {}): EmittedSignal => ({
  id,
  uri: `sw://b/signals/${id}`,
  origin: 'fp_1',
  originName: null,
  originUri: 'sw://b/identities/fp_1',
  originVerified: true,
  type: 'broadcast',
  tags: ['ops'],
  payload: { $type: 'broadcast', $tags: ['ops'], text: 'hi' },
  ttl: 60,
  boostBits: 0,
  pinned: false,
  refId: null,
  refUri: null,
  createdAt: new Date(at - 90_000).toISOString(),
  expiresAt: new Date(at).toISOString(),
  ...o,
})

t.test('relative times', async (t) => {
  const ago = (ms: number) => relativeTime(new Date(at - ms).toISOString(), at)
  t.same([ago(4000), ago(90_000), ago(3 * 3600_000), ago(2 * 86400_000), ago(-3000)], ['4s ago', '1m ago', '3h ago', '2d ago', 'in 3s'])
})

t.test('a terminal line has colour and a relative time; a pinned signal says so', async (t) => {
  const line = signalLine(sig('A1', { pinned: true, originName: 'Ada' }), { colour: true, relative: true, nowMs: at })
  t.match(line, /\u001b\[2m {2}1m ago\u001b\[0m/, 'dim relative time')
  t.match(line, /\u001b\[36mbroadcast\u001b\[0m/, 'coloured type')
  t.match(line, /Ada \(fp_1\)/)
  t.match(line, /\[pinned\]/)
  t.equal(signalLine(sig('A1'), { colour: false, relative: false }), `${sig('A1').createdAt}  broadcast  fp_1  #ops  hi  A1`)
})

t.test('a thread is a tree, replies under what they answer, in order', async (t) => {
  const lines = threadTree([sig('R'), sig('A', { refId: 'R' }), sig('B', { refId: 'R' }), sig('A1', { refId: 'A' })], {
    colour: false,
    relative: false,
  })
  t.same(
    lines.map((l) => /^( *)\S.*? {2}(\w+)(?: ↩ \w+)?$/.exec(l)!.slice(1).join('')),
    ['R', '  A', '    A1', '  B'],
  )
})
