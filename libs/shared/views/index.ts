export { describeBoard } from './board.js'
