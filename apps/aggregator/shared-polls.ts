import { WireError } from '../../libs/shared/domain/index.js'

/** A board's answer read whole: status, headers and bytes, the same for every client it is sent to. */
export interface BufferedAnswer {
  status: number
  headers: Record<string, string | string[]>
  body: Buffer
}

interface Shared {
  clients: number
  ctl: AbortController
  answer: Promise<BufferedAnswer>
}

/**
 * Identical anonymous long-polls share one request to the board: the first opens it, the others
 * wait on it, and all get the same answer. N followers of one board at one cursor hold N client
 * sockets and one upstream socket, not 2N (a process's open files bound how many it can hold).
 * When every client has left, the upstream request is aborted.
 */
export function sharedPolls() {
  const open = new Map<string, Shared>()
  return {
    /** Waits for the shared answer under `key`, starting `fetch` if no request for it is open. */
    async join(key: string, fetch: (signal: AbortSignal) => Promise<BufferedAnswer>, left: AbortSignal): Promise<BufferedAnswer> {
      let s = open.get(key)
      if (!s) {
        const ctl = new AbortController()
        const answer = fetch(ctl.signal).finally(() => {
          if (open.get(key) === entry) open.delete(key)
        })
        const entry: Shared = { clients: 0, ctl, answer }
        answer.catch(() => {}) // each client sees the failure through its own await
        open.set(key, entry)
        s = entry
      }
      const shared = s
      shared.clients++
      try {
        return await new Promise<BufferedAnswer>((resolve, reject) => {
          const gone = () => reject(new WireError('invalid_request', 'the client left'))
          if (left.aborted) return gone()
          left.addEventListener('abort', gone, { once: true })
          shared.answer.then(resolve, reject).finally(() => left.removeEventListener('abort', gone))
        })
      } finally {
        if (--shared.clients === 0 && open.get(key) === shared) {
          open.delete(key)
          shared.ctl.abort()
        }
      }
    },
  }
}
