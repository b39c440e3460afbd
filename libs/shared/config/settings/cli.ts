import { z } from 'zod'
import { commaList } from '../addresses.js'
import { group, setting, text } from '../kinds.js'

// What the `wire` command line reads from its environment (apps/cli/config.ts parses it; its
// operator commands read the server's own settings besides). Its table is in docs/cli.md.

export const cli = group('The command line', '', {
  // one base URL, or several separated by commas: a follower moves to the next when one fails
  WIRE_URL: setting(
    {
      default: 'http://localhost:4000',
      schema: z
        .string()
        .default('http://localhost:4000')
        .transform(commaList)
        .pipe(
          z
            .array(z.string().regex(/^https?:\/\/[^\s]+$/i, 'must be http(s) URLs, separated by commas'))
            .min(1, 'must be http(s) URLs, separated by commas'),
        ),
    },
    "The board's base URL; several separated by commas, and a follower moves to the next when one fails; `--url` overrides it.",
  ),
  WIRE_TOKEN: setting(
    text(),
    'Bearer token for `publish` (any 8+ characters in local mode); on reads it counts you as a reader; `--token` overrides it.',
  ),
  WIRE_ADMIN_TOKEN: setting(text(), 'The admin token for `wire admin …`; `--admin-token` overrides it.', { shown: '`SERVER_ADMIN_TOKEN`' }),
  NO_COLOR: setting({ schema: z.string().optional() }, 'Set: no colour even on a terminal.'),
})
