export { Feed, type FeedOptions, type PageOut } from './feed.js'
