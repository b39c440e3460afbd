import type { Test } from 'tap'
import type { Db } from '../../libs/shared/db/index.js'

/** Every insert transaction sleeps 0–4 ms after writing its rows, holding them uncommitted: commits interleave at random. */
export async function jitterCommits(db: { query(sql: string): Promise<unknown> }, schema: string): Promise<void> {
  await db.query(`
    create function "${schema}".jitter() returns trigger language plpgsql as $$ begin perform pg_sleep(random() * 0.004); return null; end $$;
    create trigger jitter after insert on "${schema}".signals for each statement execute function "${schema}".jitter()`)
}

/**
 * The cursor promise, checked against what the board stored: each follower saw every acknowledged
 * signal, none twice, in seq order. Returns the stored seqs, ascending, for further checks.
 */
export async function everyFollowerSawAll(
  t: Test,
  db: Pick<Db, 'query'>,
  schema: string,
  acked: string[],
  followers: Array<{ name: string; seen: string[] }>,
): Promise<number[]> {
  const { rows } = await db.query<{ id: string; seq: string }>(`select id, seq from "${schema}".signals`)
  const seqOf = new Map(rows.map((r) => [r.id, Number(r.seq)]))
  for (const f of followers) {
    t.equal(new Set(f.seen).size, f.seen.length, `${f.name} saw no signal twice`)
    t.same([...f.seen].sort(), [...acked].sort(), `${f.name} saw every acknowledged signal`)
    const order = f.seen.map((id) => seqOf.get(id)!)
    t.ok(
      order.every((q, i) => i === 0 || q > order[i - 1]!),
      `${f.name} saw them in seq order`,
    )
  }
  return [...seqOf.values()].sort((a, b) => a - b)
}
