export { createBatcher, type Batcher, type BatcherOptions } from './batcher.js'
export { boardPolicy, type BoardPolicy } from './board-policy.js'
export { publishAnswer, publishSignal, type PublishDeps } from './publish.js'
export { createPublisher, type Publisher, type PublisherOptions } from './publisher.js'
