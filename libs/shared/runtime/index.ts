import type { Config } from '../config/index.js'
import { runAgainWith } from './run-again.js'

export { semiSpaceChosen } from './run-again.js'
export { exitIfNodeTooOld, NODE_FLOOR } from './node-floor.js'

/** What a tuned process still does once it has started: the idle collection's first run, and its stop. */
export interface Tuning {
  afterStart(): void
  stop(): void
}

/**
 * Tunes a process before it loads anything heavy: a process holding a read side (a reader, the
 * single process) runs itself again with its young generation capped (READER_SEMI_SPACE_MB) and,
 * on the embedded database, with WIRE_EMBEDDED_MALLOC_ARENAS and WIRE_EMBEDDED_WASM_OPTIMIZE; then
 * the memory-reducing collection once it goes quiet (IDLE_GC_INTERVAL_MS: V8's own never starts
 * on Node 24). `prepare` runs in the tuned process before the collection starts. Every role's
 * main is "tune the process, then serve until a signal".
 */
export async function tuneProcess(cfg: Config, o: { readSide: boolean; prepare?: () => Promise<void> }): Promise<Tuning> {
  if (!o.readSide) return { afterStart() {}, stop() {} }
  const embedded = cfg.db.kind === 'embedded' ? cfg.db : null
  runAgainWith({
    semiSpaceMb: cfg.reader.semiSpaceMb,
    mallocArenas: embedded?.mallocArenas ?? 0,
    wasmBaselineOnly: embedded ? !embedded.wasmOptimize : false,
  })
  await o.prepare?.() // work before serving, in the tuned process (the embedded database's first start)
  if (cfg.reader.idleGcIntervalMs <= 0) return { afterStart() {}, stop() {} }
  // loaded only now: a process that runs itself again has not loaded it for nothing
  const { startIdleGc } = await import('./idle-gc.js')
  const gc = startIdleGc({ minIntervalMs: cfg.reader.idleGcIntervalMs, rssBudgetBytes: cfg.reader.idleGcRssBudgetMb * 2 ** 20 })
  return { afterStart: () => gc.afterStart(), stop: () => gc.stop() } // afterStart: once quiet, what start-up left (bench/results/fresh-process.md)
}
