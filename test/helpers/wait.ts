/**
 * Resolves once `check` holds, checking on every turn of the event loop (and at least every 5 ms);
 * fails after `ms` with `what` so a test waits on state, never on a guessed sleep.
 */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** `until` for assertions: true once `check` holds, false after `ms` (so `t.ok(await eventually(…), '…')` names what failed). */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  return until(check, ms).then(
    () => true,
    () => false,
  )
}
