/**
 * Who waits for a budget: a promise's two functions, or an object that is its own callback (the
 * read door's admissions, which hold no promise or closure while a limiter's Redis call is out).
 * `resolve()` when granted, maybe at once; `reject(err)` with the budget's refusal (a WireError, 429 rate_limited)
 * or the failure.
 */
export interface BudgetWaiter {
  resolve(): void
  reject(res: unknown): void
}

/** Settles `w` as `p` settles. */
export function settleFrom(p: Promise<unknown>, w: BudgetWaiter): void {
  p.then(
    () => w.resolve(),
    (err: unknown) => w.reject(err),
  )
}
