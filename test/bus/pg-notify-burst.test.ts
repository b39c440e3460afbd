import { randomBytes } from 'node:crypto'
import t from 'tap'
import { wakeBus, type Invalidation } from '../../libs/shared/bus/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, TEST_DATABASE_URL } from '../helpers/services.js'
import { eventually } from '../helpers/wait.js'

// A burst of wakes and invalidations over LISTEN/NOTIFY: one NOTIFY at a time on the connection
// (pg deprecates, and pg@9 removes, queueing a query behind a running one), nothing lost, in order.
// First in its own file: Node prints a deprecation once per process.

const quiet = createLogger('server', 'silent')

t.before(assertServicesUp)

t.test(
  'a burst of publishes sends its NOTIFYs one at a time: no pg deprecation, every invalidation and the last head arrive in order',
  async (t) => {
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    t.teardown(() => void process.off('warning', onWarning))
    const boardId = randomBytes(16).toString('hex') // a board of its own: nobody else on its channel
    const a = wakeBus({ boardId, log: quiet, listenUrl: TEST_DATABASE_URL })
    const b = wakeBus({ boardId, log: quiet, listenUrl: TEST_DATABASE_URL })
    t.teardown(() => Promise.all([a.close(), b.close()]))
    const heads: number[] = []
    const invalidations: Invalidation[] = []
    b.onWake((h) => heads.push(h))
    b.onInvalidation((m) => invalidations.push(m))
    t.ok(await eventually(() => a.healthy() && b.healthy()), 'both listening')

    const sent: Invalidation[] = []
    const settled: Promise<void>[] = []
    for (let head = 1; head <= 300; head++) {
      a.publishWake(head)
      if (head % 50 === 0) {
        const m: Invalidation = { kind: 'signal', id: `s${head}` }
        sent.push(m)
        settled.push(a.publishInvalidation(m))
      }
    }
    await Promise.all(settled)
    t.ok(
      await eventually(() => heads.includes(300) && invalidations.length === sent.length),
      'the last head and every invalidation arrived',
    )
    t.same(invalidations, sent, 'each invalidation once, in order')
    t.same(
      heads,
      [...heads].sort((x, y) => x - y),
      'heads arrive in increasing order',
    )
    await new Promise((r) => setImmediate(r)) // warnings are emitted on a later tick
    t.same(
      warnings.filter((w) => /already executing a query/.test(w)),
      [],
      'no concurrent queries on the LISTEN connection',
    )
  },
)
