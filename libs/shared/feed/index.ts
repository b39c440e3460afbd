export { Feed, type FeedOptions, type PageOut } from './feed.js'
export { createReadSide, type ReadSide, type ReadSideOptions } from './read-side.js'
export { pageBody, readPageJson, signalJson, threadJson } from './reads.js'
