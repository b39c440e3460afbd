export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/**
 * `prepared`: a hot statement whose text never changes: PostgreSQL keeps it parsed (and, after a
 * few runs, planned) per connection, instead of planning it on every run. Ignored where there is
 * nothing to gain (PGlite, a transaction).
 */
export interface QueryOptions {
  prepared?: boolean
}

/** What SQL modules need: one statement with `$n` parameters. A pool, a transaction and PGlite all are one. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<QueryResult<R>>
}

/** A transaction: one session, so it can also run several statements at once. */
export interface Tx extends Queryable {
  exec(sql: string): Promise<void>
}

/** A database: real PostgreSQL through `pg`, or embedded PGlite. Same SQL, same migrations. */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'embedded'
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>
  /** begin … commit, rollback on throw. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** A schema name validated by config (`^[a-z_][a-z0-9_]*$`), quoted once for statement text. */
export type Ident = string & { readonly __ident: unique symbol }
export function ident(name: string): Ident {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`)
  return `"${name}"` as Ident
}
