// The long-poll suite again, every request over a real socket to a listening board: the path production
// takes (GET /sw/signals through the fast path, the rest through node's server and fastify).
process.env.WIRE_TEST_TRANSPORT = 'socket'
await import('./long-poll.test.js')
