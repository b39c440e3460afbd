import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { LRUCache } from 'lru-cache'

interface Entry {
  owner: string
  task: Task
}

export interface TaskStoreLimits {
  /** All stored tasks together (JSON characters): beyond it the least recently saved go first. */
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
 * The A2A tasks of this process, bounded in memory and time (lru-cache): every task here finishes
 * within one request with its answer in the response, so tasks/get is a convenience, kept for a
 * while within a budget, never forever as with InMemoryTaskStore. Tasks are scoped to their owner
 * (the caller's token).
 */
export class BoundedTaskStore implements TaskStore {
  private readonly entries: LRUCache<string, Entry>
  private readonly limits: Required<TaskStoreLimits>
  private readonly owner: (ctx: ServerCallContext) => string

  /** `now`: a clock for tests; the cache's own (performance.now) otherwise. */
  constructor(limits: TaskStoreLimits, owner: (ctx: ServerCallContext) => string, now?: () => number) {
    this.limits = { maxWorkingMs: 60_000, ...limits }
    this.owner = owner
    this.entries = new LRUCache<string, Entry>({
      maxSize: limits.maxBytes,
      sizeCalculation: (e) => Math.max(1, JSON.stringify(e.task).length),
      ...(now && { perf: { now }, ttlResolution: 0 }),
    })
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined> {
    const e = this.entries.get(this.key(ctx, taskId), { updateAgeOnGet: false })
    return e && structuredClone(e.task)
  }

  async save(task: Task, ctx: ServerCallContext): Promise<void> {
    const ttl = isFinished(task) ? this.limits.maxAgeMs : this.limits.maxWorkingMs
    this.entries.set(this.key(ctx, task.id), { owner: this.owner(ctx), task: structuredClone(task) }, { ttl })
  }

  /** ListTasks with the SDK's own filtering and paging, over this owner's live tasks. */
  async list(params: ListTasksRequest, ctx: ServerCallContext): Promise<ListTasksResponse> {
    const owner = this.owner(ctx)
    const view = new InMemoryTaskStore(() => owner)
    for (const e of this.entries.values()) if (e.owner === owner) await view.save(e.task, ctx)
    return view.list(params, ctx)
  }

  get size() {
    return this.entries.size
  }

  private key(ctx: ServerCallContext, taskId: string) {
    return `${this.owner(ctx)}\u0000${taskId}`
  }
}
