import type { Command } from 'commander'
import type { SignalDraft } from '../../../client/src/index.js'
import { clientOf, printJson } from '../client-of.js'
import { UsageError, type Io } from '../io.js'

interface PublishOptions {
  type?: string
  tag?: string[]
  ttl?: string
  ref?: string
  field?: string[]
  idempotencyKey?: string
}

const collectValues = (v: string, prev: string[] = []) => [...prev, v]

/** `key=value` → [key, value]; the value is JSON when it parses as JSON, else the text itself. */
function parseField(f: string): [string, unknown] {
  const at = f.indexOf('=')
  if (at <= 0) throw new UsageError(`--field wants key=value, got "${f}"`)
  const raw = f.slice(at + 1)
  try {
    return [f.slice(0, at), JSON.parse(raw)]
  } catch {
    return [f.slice(0, at), raw]
  }
}

async function bodyFrom(io: Io, text: string | undefined, o: PublishOptions): Promise<SignalDraft> {
  let base: Record<string, unknown> = {}
  // @NOTE JSON piped in without `-` is read too: ignoring it published an empty broadcast and lost the payload
  const piped = text === undefined && !io.stdinTty ? await io.readStdin() : null
  if (text === '-' || (piped !== null && piped.trim() !== '')) {
    const raw = piped ?? (await io.readStdin())
    try {
      base = JSON.parse(raw)
    } catch {
      throw new UsageError('standard input is not JSON')
    }
    if (!base || typeof base !== 'object' || Array.isArray(base)) throw new UsageError('standard input must hold one JSON object')
  } else if (text !== undefined) base.text = text
  for (const f of o.field ?? []) {
    const [k, v] = parseField(f)
    base[k] = v
  }
  if (o.type) base.$type = o.type
  if (base.$type === undefined) base.$type = 'broadcast'
  if (o.tag?.length) base.$tags = o.tag.flatMap((t) => t.split(','))
  if (o.ttl !== undefined) {
    if (!/^\d{1,9}$/.test(o.ttl)) throw new UsageError('--ttl wants whole seconds')
    base.$ttl = Number(o.ttl)
  }
  if (o.ref) base.$refId = o.ref
  return base as SignalDraft
}

export function publishCommand(io: Io): (program: Command) => void {
  return (program) =>
    program
      .command('publish')
      .description('publish a signal; prints {ok, signal, cursor} as JSON')
      .argument(
        '[text]',
        'the payload text, or - to read the whole flat JSON signal from standard input (read without - too when piped in)',
      )
      .option('-t, --type <type>', '$type (default broadcast, or the one in the JSON body)')
      .option('--tag <tag>', 'a tag (repeat, or separate with commas)', collectValues)
      .option('--ttl <seconds>', `$ttl, lifetime in seconds`)
      .option('--ref <id>', '$refId: the signal this replies to (id or sw:// URI)')
      .option('-f, --field <key=value>', 'a payload field (repeat); the value is JSON when it parses, else text', collectValues)
      .option('--idempotency-key <key>', 'sent as Idempotency-Key, so a retried publish is accepted once')
      .addHelpText(
        'after',
        `\nExamples:\n  wire publish --tag hello "hi, wire"\n  wire publish -t reply --ref <id> "me too"\n  echo '{"$type":"offer","$tags":["gpu"],"price":3}' | wire publish -`,
      )
      .action(async (text: string | undefined, o: PublishOptions, cmd: Command) => {
        const body = await bodyFrom(io, text, o)
        const res = await clientOf(io, cmd).publish(body, {
          ...(o.idempotencyKey && { idempotencyKey: o.idempotencyKey }),
          signal: io.signal,
        })
        printJson(io, res)
      })
}
