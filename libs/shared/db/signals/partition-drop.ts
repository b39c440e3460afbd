import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Ident } from '../types.js'
import { keptSeqsSql, pinnedKeptSeqsSql } from './retention.js'

/** Pause between the pieces of a detached partition's removal. */
const DROP_PAUSE_MS = 20

/** The seqs of a partition's rows that a drop must keep (retention.ts). `$1` is the grace in seconds. */
export const keptRowsSql = (table: string): string => keptSeqsSql(table, '$1::int')

/**
 * Whether a closed partition can go: how many of its rows must stay, and how many of those are
 * pinned, each counted only up to `carryMax + 1` (so at most a few index pages read, however large
 * the partition). `$1` is the grace in seconds.
 */
export const survivorsSql = (table: string, carryMax: number): string => {
  const over = Math.trunc(carryMax) + 1
  return `select (select count(*)::int from (${keptSeqsSql(table, '$1::int', over)}) k) as kept,
    (select count(*)::int from (${pinnedKeptSeqsSql(table, '$1::int')} limit ${over}) p) as pinned`
}

/**
 * Removes the detached partitions (`signals_gone_<lo>` and `signal_tags_gone_<lo>`) left by `retire`, including any a previous
 * run was cut short on. `rel` names a partition table, schema-qualified.
 */
export async function dropDetached(db: Db, s: Ident, rel: (name: string) => string): Promise<void> {
  const { rows } = await db.query<{ name: string }>(
    `select relname as name from pg_class where relnamespace = to_regnamespace('${s}') and relkind = 'r'
     and (relname like 'signals\\_gone\\_%' or relname like 'signal\\_tags\\_gone\\_%')`,
  )
  // @NOTE a table of gigabytes goes a piece at a time (each index, then the table), with a pause
  // between: removing all its files in one commit stalls the disk under concurrent publishes
  for (const r of rows) {
    const idx = await db.query<{ name: string; con: string | null }>(
      `select i.relname as name, c.conname as con from pg_index x join pg_class i on i.oid = x.indexrelid
       left join pg_constraint c on c.conindid = x.indexrelid where x.indrelid = to_regclass('${rel(r.name)}')`,
    )
    for (const i of idx.rows) {
      const what = i.con ? `alter table ${rel(r.name)} drop constraint "${i.con}"` : `drop index if exists ${s}."${i.name}"`
      await db.transaction((tx) => tx.exec(`set local lock_timeout = '1s'; ${what}`))
      await sleep(DROP_PAUSE_MS)
    }
    await db.transaction((tx) => tx.exec(`set local lock_timeout = '1s'; drop table if exists ${rel(r.name)}`))
  }
}
