import { mkdirSync } from 'node:fs'
import { projectPath } from '../../../libs/shared/paths.js'
import { sql } from '../pg-cluster.js'
import { startRole, type RoleProc } from '../procs.js'
import { AGGREGATOR_HOSTS, aggregatorEnv, aggregatorLinks, registerBoards, type AggregatorLinks } from './aggregator.js'
import { makeHosts, type Hosts } from './hosts.js'
import { redisOn } from './redis.js'
import { linkProxy, type LinkProxy } from './proxy.js'

// The fleet of the network drills, each part on a host of its own (hosts.ts): a PostgreSQL primary
// and a streaming replica (scripts/cluster.sh, scripts/replica.sh), a Redis, the writer, two
// readers, the agents process, the sweeper, the aggregator and a second board it follows
// (aggregator.ts), and the clients on this machine's own namespace. The writer reaches the primary,
// the second reader its replica, and the aggregator each board, through a proxy on the client host
// (proxy.ts) that a drill may stall or slow; every other link is direct, and any may be cut.

export const HOSTS = ['pg', 'replica', 'redis', 'writer', 'reader1', 'reader2', 'agents', 'sweeper', ...AGGREGATOR_HOSTS] as const
export type Host = (typeof HOSTS)[number] | 'client'
export type RoleName = 'writer' | 'reader1' | 'reader2' | 'agents' | 'sweeper' | 'aggregator' | 'board2'

const PG_PORT = 5432
const REDIS_PORT = 6379
const ROLE_PORT = 4000

export interface NetFleet extends AggregatorLinks {
  hosts: Hosts
  roles: Record<RoleName, RoleProc>
  /** The primary, directly (as the drill's own checks reach it). */
  primaryUrl: string
  /** The thread the load replies to. */
  threadId: string
  /** The writer's link to the primary and the second reader's link to its replica. */
  writerLink: LinkProxy
  replicaLink: LinkProxy
  /** `pg_ctl restart -m fast` on the primary's host: every session of every role ends. */
  restartPrimary(): Promise<void>
  /** `pg_terminate_backend` on every backend of the primary whose application_name is `app`; how many. */
  terminate(app: string): Promise<number>
  stopRedis(): Promise<void>
  startRedis(): Promise<void>
  close(): Promise<void>
}

/** The drills' own settings (bench/drill.ts): the sweeper runs every second; every deadline at its default. */
export const DRILL_ENV: Record<string, string> = { SIGNAL_SWEEP_INTERVAL_SECONDS: '1' }

/** The short form's (test/net/drills.test.ts): every deadline and keepalive a few times shorter than its default. */
export const SHORT_DRILL_ENV: Record<string, string> = {
  ...DRILL_ENV,
  DB_CONNECT_TIMEOUT_MS: '2000',
  DB_KEEPALIVE_MS: '1000',
  DB_QUERY_TIMEOUT_MS: '4000',
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2000',
  READ_STATEMENT_TIMEOUT_MS: '2000',
  REDIS_CONNECT_TIMEOUT_MS: '2000',
  REDIS_KEEPALIVE_MS: '1000',
  REDIS_COMMAND_TIMEOUT_MS: '1000',
  AGGREGATOR_FETCH_TIMEOUT_MS: '2000',
}

/** The settings every role of the drill runs with; `env` adds the drill's own (deadlines, intervals). */
const baseEnv = (env: Record<string, string>) => ({
  WIRE_PG_SCHEMA: 'wire',
  // every identity unverified: its new thread is the writer's one transaction (count, insert,
  // commit), which a drill stalls at its commit; the load's replies go through the group commit
  LOCAL_IDENTITY_VERIFIED: '0',
  UNVERIFIED_RATE_LIMIT_MAX: '1000000',
  UNVERIFIED_THREADS_PER_DAY: '1000000',
  // the budgets stay on, through Redis (a dead Redis must not hang them), and high enough for the load
  PUBLISH_RATE_LIMIT_MAX: '1000000',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '1000000',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '1000000',
  NEW_IDENTITY_RATE_LIMIT_MAX: '1000000',
  READ_RATE_LIMIT_MAX: '1000000',
  LONG_POLLS_PER_ADDRESS_MAX: '10000',
  SHED_EVENT_LOOP_DELAY_MS: '0',
  LOG_LEVEL: 'info',
  ...env,
})

export async function startNetFleet(env: Record<string, string> = {}): Promise<NetFleet> {
  const hosts = await makeHosts([...HOSTS])
  const undo: Array<() => Promise<unknown>> = []
  const close = async () => {
    for (const step of undo.splice(0).reverse()) await step().catch(() => {})
    await hosts.close()
  }
  try {
    mkdirSync(hosts.dir, { recursive: true })
    const cidr = `${hosts.ip('client').split('.').slice(0, 2).join('.')}.0.0/16`
    const pgEnv = { ...process.env, LISTEN_ADDRESS: hosts.ip('pg'), ALLOW_CIDR: cidr }
    const pgDir = `${hosts.dir}/pg`
    const cluster = projectPath('scripts/cluster.sh')
    undo.push(() => hosts.exec('pg', cluster, ['stop', String(PG_PORT), pgDir], pgEnv))
    await hosts.exec('pg', cluster, ['start', String(PG_PORT), pgDir], pgEnv)
    const primaryUrl = `postgres://postgres@${hosts.ip('pg')}:${PG_PORT}/postgres`

    const replicaEnv = {
      ...process.env,
      PRIMARY_HOST: hosts.ip('pg'),
      PRIMARY_PORT: String(PG_PORT),
      LISTEN_ADDRESS: hosts.ip('replica'),
      ALLOW_CIDR: cidr,
    }
    const replica = projectPath('scripts/replica.sh')
    const replicaDir = `${hosts.dir}/replica`
    undo.push(() => hosts.exec('replica', replica, ['stop', String(PG_PORT), replicaDir], replicaEnv))
    const redis = redisOn(hosts)
    undo.push(() => redis.stop())
    const writerLink = await linkProxy(hosts.ip('client'), { host: hosts.ip('pg'), port: PG_PORT })
    const replicaLink = await linkProxy(hosts.ip('client'), { host: hosts.ip('replica'), port: PG_PORT })
    undo.push(
      () => writerLink.close(),
      () => replicaLink.close(),
    )

    const links = await aggregatorLinks(hosts, undo)
    const redisUrl = `redis://${hosts.ip('redis')}:${REDIS_PORT}`
    const common = baseEnv({ DATABASE_URL: primaryUrl, REDIS_URL: redisUrl, PUBLIC_WIRE_HOST: links.authority, ...env })
    const role = async (name: RoleName, e: Record<string, string>, base = common) => {
      const kind = name.startsWith('reader') ? 'reader' : name === 'board2' ? 'server' : (name as 'writer' | 'agents' | 'sweeper')
      const r = await startRole(kind, ROLE_PORT, { ...base, ...e }, undefined, [], {
        launcher: hosts.launcher(name),
        host: hosts.ip(name),
        readyWithinS: 60,
      })
      undo.push(async () => {
        const kill = setTimeout(() => r.child.kill('SIGKILL'), 15_000) // a role that does not stop is not waited for
        await r.stop()
        clearTimeout(kill)
      })
      return r
    }
    const writerDb = `postgres://postgres@${writerLink.host}:${writerLink.port}/postgres`
    // the writer migrates (through its link) while the replica is copied and Redis starts; the
    // second board and the aggregator, on schemas of their own, start meanwhile
    const [, , writer, board2, aggregator] = await Promise.all([
      hosts.exec('replica', replica, ['start', String(PG_PORT), replicaDir], replicaEnv),
      redis.start(),
      role('writer', { DATABASE_URL: writerDb }),
      // one process on the primary; it needs no Redis
      role('board2', { WIRE_PG_SCHEMA: 'board2', PUBLIC_WIRE_HOST: links.board2Authority }, baseEnv({ DATABASE_URL: primaryUrl, ...env })),
      role('aggregator', aggregatorEnv(cidr), baseEnv({ DATABASE_URL: primaryUrl, REDIS_URL: redisUrl, ...env })),
    ])
    const replicaUrl = `postgres://postgres@${hosts.ip('replica')}:${PG_PORT}/postgres`
    const [reader1, reader2, agents, sweeper] = await Promise.all([
      role('reader1', { DATABASE_REPLICA_URL: replicaUrl }),
      role('reader2', { DATABASE_REPLICA_URL: `postgres://postgres@${replicaLink.host}:${replicaLink.port}/postgres` }),
      role('agents', { DATABASE_REPLICA_URL: replicaUrl, AGENTS_ALLOWED_HOSTS: hosts.ip('agents') }),
      role('sweeper', {}),
    ])
    await registerBoards(aggregator!, links)
    const threadId = await openThread(writer!.url)
    return {
      ...links,
      threadId,
      hosts,
      roles: {
        writer: writer!,
        reader1: reader1!,
        reader2: reader2!,
        agents: agents!,
        sweeper: sweeper!,
        board2: board2!,
        aggregator: aggregator!,
      },
      primaryUrl,
      writerLink,
      replicaLink,
      restartPrimary: async () => void (await hosts.exec('pg', cluster, ['restart', String(PG_PORT), pgDir], pgEnv)),
      terminate: async (app) =>
        (
          await sql<{ n: number }>(
            primaryUrl,
            `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = '${app.replaceAll("'", "''")}'`,
          )
        )[0]!.n,
      stopRedis: () => redis.stop(),
      startRedis: () => redis.start(),
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** The thread the load replies to (a reply is not counted as a thread, so its publishes go through the group commit). */
async function openThread(writerUrl: string): Promise<string> {
  const res = await fetch(`${writerUrl}/sw/signals`, {
    method: 'POST',
    headers: { authorization: 'Bearer drill-thread-root', 'content-type': 'application/json' },
    body: JSON.stringify({ $type: 'broadcast', text: 'the drills' }),
  })
  if (!res.ok) throw new Error(`the drills' thread: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { signal: { id: string } }).signal.id
}
