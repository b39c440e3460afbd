export { Feed, type FeedOptions } from './feed.js'
export type { FeedPage } from './page.js'
export { createReadSide, type ReadSide, type ReadSideOptions } from './read-side.js'
export { pageBody, readPageJson, signalJson, threadJson } from './render.js'
