import { Role, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { LRUCache } from 'lru-cache'
import { metrics } from '../../libs/shared/metrics/index.js'

interface Entry {
  owner: string
  task: Task
}

export interface TaskStoreLimits {
  /** Finished tasks together (JSON characters): beyond it the least recently saved go first. Tasks still working have a budget of the same size of their own. */
  maxBytes: number
  /** A finished task is gone this long after its last save. */
  maxAgeMs: number
  /** A task still working is gone this long after its last save: every task here ends within its request (25 s at most). */
  maxWorkingMs?: number
}

// completed, failed, canceled, rejected (A2A TaskState)
const FINISHED = new Set([3, 4, 5, 7])
const isFinished = (t: Task) => FINISHED.has(t.status?.state ?? 0)

/**
 * What a stored task keeps: its status, artifacts and the agent's messages, never the caller's own
 * messages (a publish's payload, up to 64 KiB, that the caller already has).
 */
const kept = (task: Task): Task => structuredClone({ ...task, history: (task.history ?? []).filter((m) => m.role !== Role.ROLE_USER) })

/**
 * The A2A tasks of this process, bounded in memory and time (lru-cache): every task here finishes
 * within one request with its answer in the response, so tasks/get is a convenience, kept for a
 * while within a budget, never forever as with InMemoryTaskStore. Tasks are scoped to their owner
 * (the caller's token); a task whose owner cannot ask again (`retain` false: an anonymous caller)
 * is dropped when it finishes. Working tasks have a budget apart, so a flood of finished ones never
 * evicts a task that is still answering its request.
 */
export class BoundedTaskStore implements TaskStore {
  private readonly working: LRUCache<string, Entry>
  private readonly finished: LRUCache<string, Entry>
  private readonly limits: Required<TaskStoreLimits>
  private readonly owner: (ctx: ServerCallContext) => string
  private readonly retain: (ctx: ServerCallContext) => boolean

  /** `now`: a clock for tests; the cache's own (performance.now) otherwise. */
  constructor(
    limits: TaskStoreLimits,
    owner: (ctx: ServerCallContext) => string,
    now?: () => number,
    retain: (ctx: ServerCallContext) => boolean = () => true,
  ) {
    this.limits = { maxWorkingMs: 60_000, ...limits }
    this.owner = owner
    this.retain = retain
    const cache = () =>
      new LRUCache<string, Entry>({
        maxSize: limits.maxBytes,
        sizeCalculation: (e) => Math.max(1, JSON.stringify(e.task).length),
        ...(now && { perf: { now }, ttlResolution: 0 }),
      })
    this.working = cache()
    this.finished = cache()
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined> {
    const key = this.key(ctx, taskId)
    const e = this.working.get(key, { updateAgeOnGet: false }) ?? this.finished.get(key, { updateAgeOnGet: false })
    return e && structuredClone(e.task)
  }

  async save(task: Task, ctx: ServerCallContext): Promise<void> {
    const key = this.key(ctx, task.id)
    const entry = { owner: this.owner(ctx), task: kept(task) }
    if (!isFinished(task)) {
      this.working.set(key, entry, { ttl: this.limits.maxWorkingMs })
    } else {
      this.working.delete(key)
      if (this.retain(ctx)) this.finished.set(key, entry, { ttl: this.limits.maxAgeMs })
    }
    metrics.a2aTaskBytes.set(this.bytes)
  }

  /** ListTasks with the SDK's own filtering and paging, over this owner's live tasks. */
  async list(params: ListTasksRequest, ctx: ServerCallContext): Promise<ListTasksResponse> {
    const owner = this.owner(ctx)
    const view = new InMemoryTaskStore(() => owner)
    for (const cache of [this.working, this.finished]) for (const e of cache.values()) if (e.owner === owner) await view.save(e.task, ctx)
    return view.list(params, ctx)
  }

  get size() {
    return this.working.size + this.finished.size
  }

  /** JSON characters held, working and finished. */
  get bytes() {
    return this.working.calculatedSize + this.finished.calculatedSize
  }

  private key(ctx: ServerCallContext, taskId: string) {
    return `${this.owner(ctx)}\u0000${taskId}`
  }
}
