import { ListTasksRequest, TaskState, type Task } from '@a2a-js/sdk'
import { ServerCallContext, UnauthenticatedUser } from '@a2a-js/sdk/server'
import t from 'tap'
import { BoundedTaskStore } from '../../apps/agents/task-store.js'

const ctx = new ServerCallContext({ user: new UnauthenticatedUser() })
const owner = (c: ServerCallContext) => c.tenant ?? 'anyone'
const task = (id: string, state: TaskState, pad = 0): Task => ({
  id,
  contextId: 'c',
  status: { state, message: undefined, timestamp: new Date().toISOString() },
  artifacts: [],
  history: [],
  metadata: { pad: 'x'.repeat(pad) },
})

t.test('tasks are dropped least recently saved first beyond the memory budget', async (t) => {
  const store = new BoundedTaskStore({ maxBytes: 2000, maxAgeMs: 60_000 }, owner)
  for (let i = 0; i < 10; i++) await store.save(task(`t${i}`, TaskState.TASK_STATE_COMPLETED, 400), ctx)
  t.ok(store.size < 10 && store.size >= 3, `kept ${store.size} of 10`)
  t.equal(await store.load('t0', ctx), undefined, 'the oldest is gone')
  t.equal((await store.load('t9', ctx))?.id, 't9', 'the newest is kept')
})

t.test('a task in progress counts against the budget too, and a copy is returned', async (t) => {
  const store = new BoundedTaskStore({ maxBytes: 1500, maxAgeMs: 60_000 }, owner)
  for (let i = 0; i < 5; i++) await store.save(task(`working${i}`, TaskState.TASK_STATE_WORKING, 400), ctx)
  t.ok(store.size < 5, `working tasks are bounded as well: ${store.size} of 5 kept`)
  await store.save(task('working', TaskState.TASK_STATE_WORKING, 400), ctx)
  const w = await store.load('working', ctx)
  t.equal(w?.status?.state, TaskState.TASK_STATE_WORKING)
  w!.id = 'changed'
  t.equal((await store.load('working', ctx))?.id, 'working', 'callers cannot change the stored task')
})

t.test('finished tasks expire after maxAgeMs, working ones after maxWorkingMs; tasks are scoped to their owner', async (t) => {
  let now = 1_000_000
  const store = new BoundedTaskStore({ maxBytes: 1e9, maxAgeMs: 1000, maxWorkingMs: 30_000 }, owner, () => now)
  await store.save(task('a', TaskState.TASK_STATE_COMPLETED), ctx)
  await store.save(task('b', TaskState.TASK_STATE_WORKING), ctx)
  const other = new ServerCallContext({ tenant: 'other' })
  t.equal(await store.load('a', other), undefined, 'another owner does not see it')
  t.equal((await store.list(ListTasksRequest.fromJSON({ pageSize: 10 }), ctx)).tasks.length, 2, 'listed')
  now += 1500
  t.equal(await store.load('a', ctx), undefined, 'expired')
  t.equal((await store.load('b', ctx))?.id, 'b', 'a working task outlives a finished one')
  now += 30_000
  t.equal(await store.load('b', ctx), undefined, 'but not its request: it is gone after maxWorkingMs')
})
