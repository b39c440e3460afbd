/**
 * Names on shared services, all under the board's id: a random id made once per database
 * (migrations/0005_board_id.sql), so boards sharing a Redis or a PostgreSQL server never meet,
 * whatever their schema names.
 */
export const channels = (boardId: string) => ({
  wake: `wire:${boardId}:wake`,
  invalidate: `wire:${boardId}:invalidate`,
  presence: `wire:${boardId}:presence`,
  rateLimitPrefix: `wire:${boardId}:rl`,
  /** The LISTEN/NOTIFY channel (an SQL identifier: at most 63 bytes, no colons). */
  notify: `wire_${boardId}`.slice(0, 63),
})
