export { createBatcher, type Batcher, type BatcherOptions } from './batcher.js'
export { boardPolicy, type BoardPolicy } from './board-policy.js'
export { publishSignal, type PublishDeps, type PublishRequest } from './publish.js'
export { createPublisher, type Publisher, type PublisherOptions } from './publisher.js'
