export { boardPolicy, type BoardPolicy } from './board-policy.js'
export { publishAnswer, publishSignal, type PublishDeps } from './publish.js'
export { createPublisher, type Publisher } from './publisher.js'
export { groupedFind } from './idempotency.js'
