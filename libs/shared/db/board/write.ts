import { newSignalId, type BoardPatch } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { toRule, type Rule } from './read.js'

/** The board file (WIRE_CONFIG), validated; its name, else WIRE_BOARD_NAME. */
export interface BoardSeed {
  name?: string
  description?: string
  allowedSignalTypes?: string[]
  allow?: string[]
  block?: string[]
}

/** Writes to the board row and the rules (primary only). */
export function boardWriter(db: Queryable, s: Ident) {
  const ruleCols = 'id, rule_type, identity_id, created_at'
  return {
    async patch(p: BoardPatch): Promise<void> {
      const sets: string[] = []
      const values: unknown[] = []
      const set = (col: string, v: unknown) => (values.push(v), sets.push(`${col} = $${values.length}`))
      if (p.name !== undefined) set('name', p.name)
      if (p.description !== undefined) set('description', p.description)
      if (p.allowedSignalTypes !== undefined) set('allowed_signal_types', p.allowedSignalTypes)
      if (!sets.length) return
      // the admin's metadata is the board's: a board file or WIRE_BOARD_NAME seeds only a board never named
      await db.query(`update ${s}.board set ${sets.join(', ')}, seeded_at = coalesce(seeded_at, now()), updated_at = now()`, values)
    },
    /** Adds a rule; an existing identical pair is returned as it is (`created: false`). */
    async addRule(ruleType: 'allow' | 'deny', identityId: string): Promise<{ rule: Rule; created: boolean }> {
      const ins = await db.query<Parameters<typeof toRule>[0]>(
        `insert into ${s}.rules (id, rule_type, identity_id) values ($1, $2, $3)
         on conflict (rule_type, identity_id) do nothing returning ${ruleCols}`,
        [`rl_${newSignalId()}`, ruleType, identityId],
      )
      if (ins.rows[0]) return { rule: toRule(ins.rows[0]), created: true }
      const { rows } = await db.query<Parameters<typeof toRule>[0]>(
        `select ${ruleCols} from ${s}.rules where rule_type = $1 and identity_id = $2`,
        [ruleType, identityId],
      )
      return { rule: toRule(rows[0]!), created: false }
    },
    async removeRule(id: string): Promise<boolean> {
      return (await db.query(`delete from ${s}.rules where id = $1`, [id])).rowCount > 0
    },
    /**
     * docs/protocol.md "Config file": name/description/types seed the board once (first boot);
     * allow/block rules are upserted on every boot, never deleting runtime rules.
     */
    async seed(seed: BoardSeed): Promise<void> {
      await db.query(
        `update ${s}.board set name = $1, description = $2, allowed_signal_types = $3, seeded_at = now(), updated_at = now()
         where seeded_at is null`,
        [seed.name ?? null, seed.description ?? null, seed.allowedSignalTypes ?? null],
      )
      for (const id of seed.allow ?? []) await this.addRule('allow', id)
      for (const id of seed.block ?? []) await this.addRule('deny', id)
    },
  }
}
export type BoardWriter = ReturnType<typeof boardWriter>
