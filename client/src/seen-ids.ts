/** The ids a follower has handed out, the oldest forgotten first once `max` are held. */
export class SeenIds {
  readonly #ids = new Set<string>()
  readonly #max: number
  constructor(max: number) {
    this.#max = Math.max(1, max)
  }
  /** True when the id is new (and now remembered). */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false
    this.#ids.add(id)
    if (this.#ids.size > this.#max) this.#ids.delete(this.#ids.values().next().value!)
    return true
  }
  get size(): number {
    return this.#ids.size
  }
}
