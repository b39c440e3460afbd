import type { ClientConfig } from 'pg'
import pgListen, { type Subscriber } from 'pg-listen'
import type { Logger } from '../log/index.js'
import { reportListenHealth } from '../metrics/index.js'
import { channels } from './channels.js'
import type { BusPath, PathSink } from './path.js'

/** Messages waiting for the NOTIFY in flight; past this the newest are dropped (a stuck connection). */
const MAX_PENDING = 1000
/** How often the LISTEN connection is checked with a query. */
const PARANOID_CHECK_MS = 5000

/**
 * LISTEN/NOTIFY on the primary: one connection per process that both listens on the board's
 * channel and sends on it. The payload is the encoded message only (a head, or an invalidation of
 * under 200 bytes). `url` must reach the primary itself, not a transaction pooler (LISTEN needs a
 * session) nor a replica (NOTIFY is not replicated). `deadlines`: pg's keepalive and query deadline
 * (DB_*), so a connection whose link died silently fails its next check and is made again.
 */
export function pgPath(
  url: string,
  boardId: string,
  log: Logger,
  sink: PathSink,
  deadlines: ClientConfig = { connectionTimeoutMillis: 3000 },
): BusPath {
  const channel = channels(boardId).notify
  let sub: Subscriber | null = null
  let listening = false
  let everListened = false
  let closed = false
  let attempt = 0
  let retry: NodeJS.Timeout | undefined

  const listened = () => {
    listening = true
    attempt = 0
    if (everListened) sink.resync()
    everListened = true
  }

  const open = async () => {
    // @NOTE pg-listen's own reconnect loop ignores close(): it may make one attempt only (retryLimit 2),
    // then we start over with a new subscriber, so a closed bus never keeps retrying or keeps a connection
    const s = pgListen.default(
      // pg-listen turns keepalive on with the system's idle time (hours) unless it is given one
      { ...deadlines, connectionString: url, application_name: 'wire-listen' },
      // its check (a `select 1` every few seconds) is what finds a dead link; the query deadline fails it
      { retryLimit: 2, retryTimeout: 0, retryInterval: 50, paranoidChecking: PARANOID_CHECK_MS, parse: (t) => t, serialize: (t) => t },
    )
    sub = s
    s.events.on('reconnect', () => (listening = false))
    s.events.on('connected', () => {
      if (sub !== s) return void s.close().catch(() => {}) // a reconnect that finished after this subscriber was given up
      if (s.getSubscribedChannels().length > 0) listened() // after a reconnect: LISTEN is renewed
    })
    s.events.on('error', (err) => {
      // pg-listen stopped trying on this connection: start over with a new one
      log.warn({ err: err.message }, 'LISTEN connection failed')
      restart(s)
    })
    s.notifications.on(channel, (text: unknown) => {
      if (typeof text !== 'string') return
      if (text.startsWith('{')) sink.invalidation(text, 'pg')
      else sink.wake(text, 'pg')
    })
    try {
      await s.connect()
      await s.listenTo(channel)
      if (sub === s) listened()
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'LISTEN not started yet')
      restart(s)
    }
  }

  const restart = (s: Subscriber) => {
    if (sub !== s) return
    listening = false
    sub = null
    void s.close().catch(() => {})
    if (closed) return
    retry = setTimeout(() => void open(), Math.min(100 * ++attempt, 2000))
    retry.unref()
  }

  // @NOTE one NOTIFY at a time on the connection: pg deprecates (and pg@9 removes) queueing a
  // query behind a running one, which a burst of publishes did. Messages sent meanwhile wait here
  // in order; a wake waiting behind a wake is merged into it (receivers keep the highest head), so
  // a burst costs a NOTIFY per round trip, not one per publish.
  const pending: string[] = []
  let sending = false
  const isWake = (text: string) => !text.startsWith('{')
  const send = (text: string) => {
    if (!sub || !listening) return void log.debug('wake-up not sent: LISTEN connection down')
    const last = pending.length - 1
    if (last >= 0 && isWake(text) && isWake(pending[last]!)) pending[last] = Number(text) > Number(pending[last]) ? text : pending[last]!
    else if (pending.length < MAX_PENDING) pending.push(text)
    else return void log.warn('wake-up not sent: NOTIFY queue full')
    void drain()
  }
  const drain = async () => {
    if (sending) return
    sending = true
    for (let text = pending.shift(); text !== undefined; text = pending.shift()) {
      const s = sub
      if (!s || !listening) {
        log.debug({ dropped: pending.length + 1 }, 'wake-up not sent: LISTEN connection down')
        pending.length = 0
        break
      }
      try {
        await s.notify(channel, text)
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'wake-up not sent by NOTIFY')
      }
    }
    sending = false
  }

  void open()
  const stopReporting = reportListenHealth(() => listening) // wire_pg_listen_up
  return {
    name: 'pg',
    sendWake: send,
    sendInvalidation: send,
    healthy: () => listening,
    async close() {
      stopReporting()
      closed = true
      clearTimeout(retry)
      const s = sub
      sub = null
      listening = false
      pending.length = 0
      await s?.close().catch(() => {})
    },
  }
}
