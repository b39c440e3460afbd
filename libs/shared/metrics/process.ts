import type { Server } from 'node:net'
import client, { type Registry } from 'prom-client'

/**
 * prom-client's defaults that walk every open handle of the process on each scrape, on the event
 * loop every waiting follower's answer also waits on. With 10,000 connections one scrape spent
 * 20 ms of CPU in them (`process_open_fds` 11 ms: a readdirSync of /proc/self/fd; the handles
 * 6.4 ms; the resources 2.4 ms), against 1.5 ms for all of /metrics with none open
 * (bench/results/fan-out-steady.md, a Prometheus scrape). Dropped: `wire_open_connections` counts what
 * grows with the followers, and `process_max_fds` stays.
 */
export const PER_HANDLE_METRICS = [
  'process_open_fds',
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
]

const servers = new Set<Server>()

/** prom-client's process and Node.js metrics into `registry`, without those that cost a walk of every handle. */
export function processMetrics(registry: Registry): void {
  client.collectDefaultMetrics({ register: registry })
  for (const name of PER_HANDLE_METRICS) registry.removeSingleMetric(name)
  new client.Gauge({
    name: 'wire_open_connections',
    help: 'Client connections open on this process (HTTP, whichever path serves them): each holds a file descriptor (compare process_max_fds)',
    registers: [registry],
    async collect() {
      const open = await Promise.all(
        [...servers].map((s) => new Promise<number>((resolve) => s.getConnections((err, n) => resolve(err ? 0 : n)))),
      )
      this.set(open.reduce((a, b) => a + b, 0))
    },
  })
}

/** Counts `server`'s open connections in wire_open_connections; returns what stops it (when its app closes). */
export function reportConnections(server: Server): () => void {
  servers.add(server)
  return () => void servers.delete(server)
}
