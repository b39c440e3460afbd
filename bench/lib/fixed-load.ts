import { randomBytes } from 'node:crypto'
import { client } from './load.js'

/**
 * Loads of a fixed size and shape, for counts that must not depend on time (bench/instructions.ts):
 * the same operations in the same order however fast the server answers. Requests are built once.
 */

/** bench/wrk/publish.lua's signals: identity i (bench-agent-<i>-token) of `identities`, two tags. */
export function publishRequests(identities = 64) {
  return Array.from({ length: identities }, (_, i) => ({
    body: JSON.stringify({ $type: 'broadcast', $tags: ['bench', `w${i % 8}`], text: `a benchmark signal from worker ${i}`, n: i }),
    headers: { authorization: `Bearer bench-agent-${i}-token` },
  }))
}

/**
 * `n` publishes in rounds of `batch` sent at once on `batch` keep-alive connections, each round
 * answered in full before the next: the writer's group commit sees `batch` publishes arrive together.
 * `keyed`: every publish with an Idempotency-Key of its own. Throws on an answer other than 200.
 */
export async function publishRounds(baseUrl: string, n: number, batch: number, o: { keyed?: boolean } = {}): Promise<void> {
  const c = client(baseUrl, batch)
  const requests = publishRequests()
  // keyed: each publish with an Idempotency-Key never used before (a prefix of this call's own)
  const run = randomBytes(6).toString('hex')
  const headersOf = (r: (typeof requests)[number], k: number) =>
    o.keyed ? { ...r.headers, 'idempotency-key': `bench-${run}-${k}` } : r.headers
  try {
    for (let done = 0, k = 0; done < n; done += batch) {
      const round = Array.from({ length: Math.min(batch, n - done) }, () => k++)
      const answers = await Promise.all(
        round.map((i) => {
          const r = requests[i % requests.length]!
          return c.request('POST', '/sw/signals', r.body, headersOf(r, i))
        }),
      )
      const bad = answers.find((a) => a.status !== 200)
      if (bad) throw new Error(`publish answered ${bad.status}: ${bad.body.slice(0, 200)}`)
    }
  } finally {
    c.close()
  }
}

/** `n` GETs of `path` over `connections` keep-alive connections, each sending its next once answered. */
export async function getLoop(baseUrl: string, path: string, n: number, connections: number): Promise<void> {
  const c = client(baseUrl, connections)
  let left = n
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (left > 0) {
          left--
          const a = await c.request('GET', path)
          if (a.status !== 200) throw new Error(`GET ${path} answered ${a.status}: ${a.body.slice(0, 200)}`)
        }
      }),
    )
  } finally {
    c.close()
  }
}
