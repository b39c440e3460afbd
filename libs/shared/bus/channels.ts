/** Redis names, all under `wire:<schema>:` so boards (and test files) sharing a Redis never meet. */
export const channels = (schema: string) => ({
  wake: `wire:${schema}:wake`,
  invalidate: `wire:${schema}:invalidate`,
  presence: `wire:${schema}:presence`,
  rateLimitPrefix: `wire:${schema}:rl`,
})
