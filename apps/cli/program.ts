import { Command } from 'commander'
import { adminCommands } from './commands/admin.js'
import { followCommand } from './commands/follow.js'
import { moveCommands } from './commands/move.js'
import { opsCommands } from './commands/ops.js'
import { publishCommand } from './commands/publish.js'
import { readCommands } from './commands/read.js'
import type { Io } from './io.js'
import { wireVersion } from '../../libs/shared/version.js'

/** The `wire` command line: every command, each with --help. */
export function buildProgram(io: Io): Command {
  const program = new Command('wire')
    .description('publish to and follow a Wire board (WIRE_URL, WIRE_TOKEN), and operate a server')
    .option('--url <url>', "the board's base URL, or several separated by commas (default WIRE_URL, else http://localhost:4000)")
    .option('--token <token>', 'the bearer token (default WIRE_TOKEN)')
    .version(wireVersion(), '-V, --version', 'print the version of wire and exit')
    .showHelpAfterError()
    .addHelpText('after', `\nExamples:\n  wire follow\n  WIRE_TOKEN=my-agent-token wire publish --tag hello "hi, wire"\n  wire thread <id>`)
  for (const add of [publishCommand(io), followCommand(io), readCommands(io), adminCommands(io), opsCommands(io), moveCommands(io)])
    add(program)
  return program
}
