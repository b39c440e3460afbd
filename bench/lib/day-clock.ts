import type { Db } from '../../libs/shared/db/index.js'

// A fast clock for PostgreSQL: the sweeper's rules are SQL on `now()` (the grace, the 24 h floor, a
// partition's rows that must stay), so the simulated day has to reach them there. A connection made
// with `clockedUrl` resolves an unqualified `now()` to `wire_bench_clock.now()` (a schema named
// before pg_catalog in its search_path wins over the built-in), which returns the session's
// `wire_bench.now`: the bench sets it before each sweep (and each replica read) to the simulated
// time of the feed's head. Wire's statements name every table with its schema, so the search path
// changes nothing else. Other connections (the writer, the lag sampler) keep the real clock.
// The function is a one-line SQL function of a setting (inlined, as cheap per row as now()), and
// the clock's schema travels to the standby with everything else.

const SCHEMA = 'wire_bench_clock'
/** The simulated now(), by its full name (a column default binds to the function named when it is set). */
export const CLOCK_NOW = `${SCHEMA}.now()`

export async function installClock(db: Db): Promise<void> {
  await db.exec(`create schema if not exists ${SCHEMA};
    create or replace function ${SCHEMA}.now() returns timestamptz language sql stable
    as $$ select current_setting('wire_bench.now')::timestamptz $$`)
}

/** `url` for a connection whose `now()` is the simulated clock (set it with `setClock` first). */
export function clockedUrl(url: string): string {
  const u = new URL(url)
  u.searchParams.set('options', `-c search_path=${SCHEMA},pg_catalog`)
  return u.toString()
}

/** Sets a clocked connection's `now()`; on a pool, give it one connection (max 1). */
export async function setClock(db: Db, simMs: number): Promise<void> {
  await db.query(`select set_config('wire_bench.now', $1, false)`, [new Date(simMs).toISOString()])
}
