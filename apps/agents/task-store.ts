import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk'
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'

interface Entry {
  owner: string
  task: Task
  bytes: number
  savedAt: number
}

export interface TaskStoreLimits {
  /** Finished tasks are dropped, oldest first, once all stored tasks together exceed this (JSON characters). */
  maxBytes: number
  /** Finished tasks older than this are gone. */
  maxAgeMs: number
}

// completed, failed, canceled, rejected (A2A TaskState)
const FINISHED = new Set([3, 4, 5, 7])
const isFinished = (t: Task) => FINISHED.has(t.status?.state ?? 0)

/**
 * The A2A tasks of this process, bounded. Every task here finishes within one request (25 s at
 * most), with its answer in the response; tasks/get is a convenience, so finished tasks live for
 * a while (maxAgeMs) within a memory budget (maxBytes), never forever as with InMemoryTaskStore.
 * A task in progress is never dropped. Tasks are scoped to their owner (the caller's token).
 */
export class BoundedTaskStore implements TaskStore {
  private readonly entries = new Map<string, Entry>()
  private bytes = 0
  private readonly limits: TaskStoreLimits
  private readonly owner: (ctx: ServerCallContext) => string
  private readonly now: () => number

  constructor(limits: TaskStoreLimits, owner: (ctx: ServerCallContext) => string, now = Date.now) {
    this.limits = limits
    this.owner = owner
    this.now = now
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined> {
    const e = this.entries.get(this.key(ctx, taskId))
    if (!e || this.expired(e)) return undefined
    return structuredClone(e.task)
  }

  async save(task: Task, ctx: ServerCallContext): Promise<void> {
    const key = this.key(ctx, task.id)
    this.drop(key)
    const entry = { owner: this.owner(ctx), task: structuredClone(task), bytes: JSON.stringify(task).length, savedAt: this.now() }
    this.entries.set(key, entry) // re-inserted: the Map's order is the order of last save
    this.bytes += entry.bytes
    this.evict()
  }

  /** ListTasks with the SDK's own filtering and paging, over this owner's live tasks. */
  async list(params: ListTasksRequest, ctx: ServerCallContext): Promise<ListTasksResponse> {
    const owner = this.owner(ctx)
    const view = new InMemoryTaskStore(() => owner)
    for (const e of this.entries.values()) if (e.owner === owner && !this.expired(e)) await view.save(e.task, ctx)
    return view.list(params, ctx)
  }

  get size() {
    return this.entries.size
  }

  private key(ctx: ServerCallContext, taskId: string) {
    return `${this.owner(ctx)}\u0000${taskId}`
  }

  private expired(e: Entry) {
    return isFinished(e.task) && this.now() - e.savedAt > this.limits.maxAgeMs
  }

  private drop(key: string) {
    const old = this.entries.get(key)
    if (!old) return
    this.bytes -= old.bytes
    this.entries.delete(key)
  }

  private evict() {
    for (const [key, e] of this.entries) {
      if (this.bytes <= this.limits.maxBytes && !this.expired(e)) break
      if (isFinished(e.task)) this.drop(key)
    }
  }
}
