import { getEncoding } from 'js-tiktoken'
import { freePort, startRole } from './lib/procs.js'
import { sqlOn } from './lib/sql.js'

// npm run bench:model-read: what one default MCP read_signals costs a model's context, on a board of
// BENCH_SIGNALS (100) short signals, before and after the compact default, in the same run against
// the same board. "Before" is today's default read as it answered until now: the HTTP page of up
// to 100 signals (read_signals with fields "full" and limit 100 answers exactly that text). "After"
// is read_signals with no arguments. Bytes of the tool's text (what a client hands the model) and
// its tokens with the o200k_base and cl100k_base encodings (js-tiktoken), and the bytes of the
// whole HTTP answer (after: the text and the same JSON as structuredContent).

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test'
const SIGNALS = Number(process.env.BENCH_SIGNALS ?? 100)
const sql = sqlOn(DATABASE_URL)
const encodings = { o200k_base: getEncoding('o200k_base'), cl100k_base: getEncoding('cl100k_base') }

const schema = `bench_model_read_${Date.now()}`
const env = {
  DATABASE_URL,
  WIRE_PG_SCHEMA: schema,
  PUBLISH_RATE_LIMIT_MAX: '0',
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: '0',
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '0',
  READ_RATE_LIMIT_MAX: '0',
}
const board = await startRole('server', await freePort(), env)
try {
  for (let i = 0; i < SIGNALS; i++) {
    const body = JSON.stringify({ $type: 'broadcast', $tags: ['bench', i % 2 ? 'odd' : 'even'], text: `short signal number ${i}` })
    const r = await fetch(`${board.url}/sw/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench-model-read' },
      body,
    })
    if (r.status !== 200) throw new Error(`publish answered ${r.status}: ${await r.text()}`)
  }
  const read = async (args: Record<string, unknown>) => {
    const r = await fetch(`${board.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_signals', arguments: args } }),
    })
    const answer = await r.text()
    const text = (JSON.parse(answer) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text
    return {
      answerBytes: Buffer.byteLength(answer),
      textBytes: Buffer.byteLength(text),
      signals: (JSON.parse(text) as { signals: unknown[] }).signals.length,
      text,
    }
  }
  const before = await read({ fields: 'full', limit: 100 })
  const after = await read({})
  const line = (label: string, m: typeof before) => {
    const tokens = Object.entries(encodings)
      .map(([name, enc]) => `${enc.encode(m.text).length} tokens (${name})`)
      .join(', ')
    return `${label}: ${m.signals} signals, text ${m.textBytes} bytes, ${tokens}; whole answer ${m.answerBytes} bytes`
  }
  const o200 = (m: typeof before) => encodings.o200k_base.encode(m.text).length
  process.stdout.write(`wire bench:model-read ${new Date().toISOString()}: a board of ${SIGNALS} short signals\n`)
  process.stdout.write(`${line("before (the HTTP page, today's default read)", before)}\n${line('after (read_signals {})', after)}\n`)
  process.stdout.write(
    `after/before: text ${(after.textBytes / before.textBytes).toFixed(3)}, tokens (o200k_base) ${(o200(after) / o200(before)).toFixed(3)}\n`,
  )
  const perSignal = await read({ fields: 'full', limit: 20 })
  process.stdout.write(
    `the same 20 signals in the HTTP form: text ${perSignal.textBytes} bytes, ${o200(perSignal)} tokens (o200k_base): the compact form is ${(after.textBytes / perSignal.textBytes).toFixed(3)} of it\n`,
  )
} finally {
  await board.stop()
  await sql(`drop schema if exists "${schema}" cascade; drop schema if exists "${schema}_boss" cascade`)
}
process.exit(0)
