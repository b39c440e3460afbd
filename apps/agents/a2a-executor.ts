import type { AgentsContext } from './context.js'
import { randomUUID } from 'node:crypto'
import { Role, TaskState, type Message, type Part } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server'
import { invalid } from '../../libs/shared/domain/index.js'
import { errorBody, logFailure, toWireError } from '../../libs/shared/http/index.js'
import { publishAnswer, publishSignal } from '../../libs/shared/publish/index.js'
import type { AgentCaller } from '../../libs/shared/http/index.js'
import { readPage } from './deps.js'
import { parseFields, shapeAnswer } from './model-read.js'
import { StrictReadArgs, toReadQuery } from './read-args.js'

/** Where a2a.ts leaves the request's Caller in the SDK's ServerCallContext state. */
export const CALLER_KEY = 'wire.caller'

const USAGE =
  'send one data part: a signal object with "$type" publishes it (skill publish-signal); ' +
  'read parameters such as {"cursor": 0, "wait": 25} read the feed (skill read-signals)'

/**
 * The board as an A2A agent. Each message/send runs one skill to completion: the task completes
 * with one artifact holding the same JSON as the HTTP route, or fails with the protocol error
 * (`{error:{code,message}}` in its status message). It never throws: the SDK would log the error.
 */
export class WireAgentExecutor implements AgentExecutor {
  private readonly deps: AgentsContext
  constructor(deps: AgentsContext) {
    this.deps = deps
  }

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = rc
    const caller = rc.context.state.get(CALLER_KEY) as AgentCaller
    const stamp = () => new Date().toISOString()
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: stamp() },
        artifacts: [],
        history: [rc.userMessage],
        metadata: undefined,
      }),
    )
    let state = TaskState.TASK_STATE_COMPLETED
    let message: Message | undefined
    try {
      const { skill, json } = await runSkill(this.deps, caller, rc.userMessage)
      const artifact = {
        artifactId: randomUUID(),
        name: skill,
        description: '',
        parts: [dataPart(JSON.parse(json))],
        metadata: undefined,
        extensions: [],
      }
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }))
    } catch (err) {
      const e = toWireError(err)
      logFailure(caller.log, err, e, { surface: 'a2a' })
      const { error } = errorBody(e)
      state = TaskState.TASK_STATE_FAILED
      message = {
        messageId: randomUUID(),
        contextId,
        taskId,
        role: Role.ROLE_AGENT,
        parts: [dataPart({ error }), textPart(`${e.code}: ${e.message}`)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: stamp() }, metadata: undefined }))
  }

  // every task finishes within one request (a read waits 25 s at most): there is nothing to stop early
  cancelTask = async (): Promise<void> => {}
}

async function runSkill(deps: AgentsContext, caller: AgentCaller, msg: Message): Promise<{ skill: string; json: string }> {
  const data = msg.parts.find((p) => p.content?.$case === 'data')?.content?.value as unknown
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw invalid(USAGE)
  if ('$type' in data) {
    const s = await publishSignal(deps.publish, caller, JSON.stringify(data))
    caller.log.info({ id: s.id, seq: s.seq, origin: s.origin, via: 'a2a' }, 'signal published')
    return { skill: 'publish-signal', json: publishAnswer(s, deps.cfg.authority) }
  }
  const parsed = StrictReadArgs.safeParse(data)
  if (!parsed.success) {
    const i = parsed.error.issues[0]
    throw invalid(`${i?.path.length ? `${i.path.join('.')}: ` : ''}${i?.message ?? 'invalid read parameters'}; ${USAGE}`)
  }
  const fields = parseFields(parsed.data.fields as string | string[] | undefined)
  return { skill: 'read-signals', json: shapeAnswer(await readPage(deps, caller, toReadQuery(parsed.data)), fields) }
}

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
})
const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})
