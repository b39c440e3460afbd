import type { Command } from 'commander'
import type { BoardPatch } from '../../../client/src/index.js'
import { commaList } from '../../../libs/shared/config/index.js'
import { clientOf, printJson } from '../client-of.js'
import { UsageError, type Io } from '../io.js'

interface MetadataOptions {
  name?: string
  description?: string
  types?: string
  anyType?: boolean
}

/** `wire admin …`: metadata, rules, pin, unpin, remove (WIRE_ADMIN_TOKEN or --admin-token). */
export function adminCommands(io: Io): (program: Command) => void {
  return (program) => {
    const admin = program
      .command('admin')
      .description('manage the board (needs the admin token: WIRE_ADMIN_TOKEN or --admin-token)')
      .option('--admin-token <token>', "the board's SERVER_ADMIN_TOKEN")
    const wire = (cmd: Command) => clientOf(io, cmd).admin

    admin
      .command('metadata')
      .description('show the board metadata, or change it with the options')
      .option('--name <name>', 'the board name')
      .option('--description <text>', 'the description ("" clears it)')
      .option('--types <list>', 'the allowed $type values, separated by commas')
      .option('--any-type', 'allow every $type again')
      .action(async (o: MetadataOptions, cmd: Command) => {
        if (o.types !== undefined && o.anyType) throw new UsageError('--types and --any-type exclude each other')
        const patch: BoardPatch = {}
        if (o.name !== undefined) patch.name = o.name
        if (o.description !== undefined) patch.description = o.description === '' ? null : o.description
        if (o.types !== undefined) patch.allowedSignalTypes = commaList(o.types)
        if (o.anyType) patch.allowedSignalTypes = null
        printJson(io, Object.keys(patch).length ? await wire(cmd).patchMetadata(patch) : await wire(cmd).metadata())
      })

    const rules = admin.command('rules').description('publish rules: list, add, remove')
    rules
      .command('list', { isDefault: true })
      .description('list the rules')
      .action(async (_o: unknown, cmd: Command) => printJson(io, { rules: await wire(cmd).rules() }))
    rules
      .command('add')
      .description('allow or deny an identity')
      .argument('<ruleType>', 'allow or deny')
      .argument('<identityId>', 'the identity id (fp_… in local mode)')
      .action(async (ruleType: string, identityId: string, _o: unknown, cmd: Command) => {
        if (ruleType !== 'allow' && ruleType !== 'deny') throw new UsageError('the rule type is allow or deny')
        printJson(io, { rule: await wire(cmd).addRule(ruleType, identityId) })
      })
    rules
      .command('remove')
      .description('remove a rule by its id')
      .argument('<ruleId>')
      .action(async (id: string, _o: unknown, cmd: Command) => (await wire(cmd).removeRule(id), printJson(io, { ok: true })))

    for (const [name, description] of [
      ['pin', 'pin a signal: it stays past its expiry'],
      ['unpin', 'unpin a signal'],
      ['remove', 'remove a signal at once, everywhere (moderation)'],
    ] as const)
      admin
        .command(name)
        .description(description)
        .argument('<id>', 'a signal id or sw:// URI')
        .action(async (id: string, _o: unknown, cmd: Command) => {
          const a = wire(cmd)
          if (name === 'remove') return (await a.remove(id), printJson(io, { ok: true }))
          printJson(io, { ok: true, signal: name === 'pin' ? await a.pin(id) : await a.unpin(id) })
        })
  }
}
