import { servedBy, type PageSourceName, type ReadFilter, type ReadQuery } from '../domain/index.js'
import type { FeedPage } from './page.js'

/**
 * The matches after `cursor` now, or null: this source cannot tell (the tail does not reach back
 * that far, a chunk on the way is not held) and the next is asked. `first`: the read's first page,
 * not a wait's (the database gates first pages).
 */
type AfterLook = (q: ReadQuery, cursor: number, now: number, first: boolean) => FeedPage | Promise<FeedPage> | null
/** The newest page (a read without a cursor) now, or null: the next source is asked. */
type NewestLook = (q: ReadQuery, now: number, first: boolean) => FeedPage | Promise<FeedPage> | null

/**
 * One place a page can come from. Which reads it may answer is not said here: it is the source's
 * column of READ_FILTERS' `sources` (domain/read-filters.ts), which every filter must fill, so a
 * source cannot be asked for a filter it has not been declared to apply.
 */
export interface PageSource {
  readonly name: PageSourceName
  readonly after?: AfterLook
  readonly newest?: NewestLook
}

type Held = PageSource & { readonly serves: (f: ReadFilter) => boolean }

/**
 * A feed's page sources in the order they are asked: a read's page is the answer of the first one
 * that serves its filters and does not pass. The last must always answer (the database).
 *
 * @NOTE one loop for every kind of page, so adding a source is one entry in the list (and its
 * column in READ_FILTERS). It runs on every read and wake-up: no allocation of its own.
 */
export class PageSources {
  private readonly list: readonly Held[]

  constructor(list: readonly PageSource[]) {
    // every entry of one shape (absent looks as undefined): the loop below reads one hidden class
    this.list = list.map((s) => ({ name: s.name, after: s.after, newest: s.newest, serves: servedBy(s.name) }))
  }

  /** The names of the sources asked for pages after a cursor, or for newest pages, in order. */
  names(kind: 'after' | 'newest'): PageSourceName[] {
    return this.list.filter((s) => s[kind] !== undefined).map((s) => s.name)
  }

  /**
   * The page after `cursor` (null: the newest page) now: the first answer in order. `first`: the
   * read's first page, not a wait's.
   */
  page(q: ReadQuery, cursor: number | null, now: number, first: boolean): FeedPage | Promise<FeedPage> {
    const list = this.list
    for (let i = 0; i < list.length; i++) {
      const s = list[i]!
      if ((cursor === null ? s.newest : s.after) === undefined || !s.serves(q)) continue
      const page = cursor === null ? s.newest!(q, now, first) : s.after!(q, cursor, now, first)
      if (page !== null) return page
    }
    throw new Error('no page source answered') // the last, the database, always does
  }
}
