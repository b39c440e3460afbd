/**
 * `fn` one call at a time: a call while one runs is folded into one more run after it (however many
 * came), and resolves with that run. A run that throws is reported to `onError`, never rethrown.
 */
export function coalesced(fn: () => Promise<void>, onError: (err: unknown) => void): () => Promise<void> {
  let running: Promise<void> | null = null
  let again = false
  const loop = async () => {
    do {
      again = false
      await fn().catch(onError)
    } while (again)
  }
  return () => {
    if (running) {
      again = true
      return running
    }
    return (running = loop().finally(() => (running = null)))
  }
}
