import type { BoardMetadata, PublishRule } from '../../domain/index.js'
import type { Ident, Queryable } from '../types.js'
import { activeCountsSql } from '../stats/read.js'

/** The board row: the fields of its metadata (GET /sw/wire) that are stored. */
export type BoardMeta = Pick<BoardMetadata, 'name' | 'description' | 'allowedSignalTypes'>

/** A publish rule as the admin API returns it: the shared wire type. */
export type Rule = PublishRule

export interface ActiveStats {
  activeSignals: number
  activeIdentities: number
}

const DEFAULT_BOARD_NAME = 'main'

interface RuleRow {
  id: string
  rule_type: 'allow' | 'deny'
  identity_id: string
  created_at: Date
}
export const toRule = (r: RuleRow): Rule => ({
  id: r.id,
  ruleType: r.rule_type,
  identityId: r.identity_id,
  createdAt: r.created_at.toISOString(),
})

/** Board metadata, rules and the active counts; runs on a replica as well as the primary. */
export function boardReader(db: Queryable, s: Ident) {
  const metaSql = `select name, description, allowed_signal_types from ${s}.board`
  const rulesSql = `select id, rule_type, identity_id, created_at from ${s}.rules order by created_at, id`
  const statsSql = activeCountsSql(s)
  return {
    async meta(): Promise<BoardMeta> {
      const { rows } = await db.query<{ name: string | null; description: string | null; allowed_signal_types: string[] | null }>(metaSql)
      const r = rows[0]
      return {
        name: r?.name ?? DEFAULT_BOARD_NAME,
        description: r?.description ?? null,
        allowedSignalTypes: r?.allowed_signal_types ?? null,
      }
    },
    async rules(): Promise<Rule[]> {
      return (await db.query<RuleRow>(rulesSql)).rows.map(toRule)
    },
    async activeStats(): Promise<ActiveStats> {
      const r = (await db.query<{ active_signals: number; active_identities: number }>(statsSql)).rows[0]
      return { activeSignals: r?.active_signals ?? 0, activeIdentities: r?.active_identities ?? 0 }
    },
  }
}
export type BoardReader = ReturnType<typeof boardReader>
