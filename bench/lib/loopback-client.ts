import net from 'node:net'

// The client side of bench/loopback-first-writes.ts: `count` connections to 127.0.0.1:`port`, each
// sending one byte when it connects and one more after each chunk it receives (a follower's next poll).
const [port, count] = process.argv.slice(2).map(Number)
for (let i = 0; i < count!; i++) {
  const s = net.connect(port!, '127.0.0.1', () => s.write('x'))
  s.on('data', () => s.write('x'))
}
