import type { Command } from 'commander'
import { clientOf, printJson } from '../client-of.js'
import { signalLine, threadTree } from '../format.js'
import type { Io } from '../io.js'

/** `wire get`, `wire thread`, `wire board`. */
export function readCommands(io: Io): (program: Command) => void {
  const style = () => ({ colour: io.tty && !io.cfg.noColor, relative: io.tty })
  return (program) => {
    program
      .command('get')
      .description('one signal and its direct replies, as JSON')
      .argument('<id>', 'a signal id or sw:// URI')
      .action(async (id: string, _o: unknown, cmd: Command) => printJson(io, await clientOf(io, cmd).get(id, { signal: io.signal })))

    program
      .command('thread')
      .description('a signal and every reply below it, as an indented tree (or JSON)')
      .argument('<id>', 'a signal id or sw:// URI')
      .option('--json', 'the signals as JSON instead')
      .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
        const { signals } = await clientOf(io, cmd).thread(id, { signal: io.signal })
        if (o.json) return printJson(io, { signals })
        for (const line of threadTree(signals, style())) io.out(line)
      })

    program
      .command('board')
      .description("the board's name, description, allowed types and live counts")
      .option('--json', 'the metadata as JSON')
      .option('--recent', 'also the newest signals, one line each')
      .action(async (o: { json?: boolean; recent?: boolean }, cmd: Command) => {
        const wire = clientOf(io, cmd)
        const b = await wire.board({ signal: io.signal })
        if (o.json) return printJson(io, b)
        io.out(`${b.name}  ${b.uri}`)
        if (b.description) io.out(b.description)
        io.out(`types: ${b.allowedSignalTypes ? b.allowedSignalTypes.join(', ') : 'any'}`)
        io.out(`active signals: ${b.stats.activeSignals}  identities: ${b.stats.activeIdentities}  readers: ${b.stats.recentPollers}`)
        if (o.recent) for (const s of (await wire.read({ limit: 20 }, { signal: io.signal })).signals) io.out(signalLine(s, style()))
      })
  }
}
