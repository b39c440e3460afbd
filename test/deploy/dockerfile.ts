import { readFileSync } from 'node:fs'
import { DockerfileParser, JSONInstruction, ModifiableInstruction } from 'dockerfile-ast'
import { projectPath } from '../../libs/shared/paths.js'

// The Dockerfile, read with dockerfile-ast (the parser behind VS Code's Docker support), and the
// rules the image must keep (docs/deploy.md). There is no Docker engine here: docs/deploy.md says what
// this can and cannot prove.

const KEYWORDS = new Set([
  'FROM',
  'ARG',
  'ENV',
  'RUN',
  'COPY',
  'ADD',
  'WORKDIR',
  'USER',
  'LABEL',
  'EXPOSE',
  'ENTRYPOINT',
  'CMD',
  'HEALTHCHECK',
  'SHELL',
  'STOPSIGNAL',
  'VOLUME',
  'ONBUILD',
])

export interface Instruction {
  keyword: string
  /** Arguments without flags; for JSON (exec) form, the JSON strings. */
  args: string[]
  flags: Record<string, string | null>
  text: string
  line: number
}
export interface Stage {
  name: string | null
  /** The base image with build-arg defaults substituted. */
  image: string
  instructions: Instruction[]
}

export const readDockerfile = () => readFileSync(projectPath('Dockerfile'), 'utf8')
export const readDockerignore = () => readFileSync(projectPath('.dockerignore'), 'utf8')

export function parseDockerfile(text: string): Stage[] {
  const df = DockerfileParser.parse(text)
  const defaults: Record<string, string> = {}
  for (const a of df.getInitialARGs()) {
    const p = a.getProperty()
    if (p?.getValue()) defaults[p.getName()] = p.getValue()!
  }
  const stages: Stage[] = []
  for (const ins of df.getInstructions()) {
    const keyword = ins.getKeyword()
    const flags = ins instanceof ModifiableInstruction ? Object.fromEntries(ins.getFlags().map((f) => [f.getName(), f.getValue()])) : {}
    const args =
      ins instanceof JSONInstruction && ins.getJSONStrings().length
        ? ins.getJSONStrings().map((s) => s.getJSONValue())
        : ins.getArguments().map((a) => a.getValue())
    const item: Instruction = { keyword, args, flags, text: ins.getTextContent(), line: ins.getRange().start.line + 1 }
    if (keyword === 'FROM') {
      const image = args[0]!.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, v: string) => defaults[v] ?? `\${${v}}`)
      const as = args.findIndex((a) => a.toUpperCase() === 'AS')
      stages.push({ name: as >= 0 ? args[as + 1]! : null, image, instructions: [item] })
    } else if (stages.length) stages.at(-1)!.instructions.push(item)
    else if (keyword !== 'ARG') throw new Error(`line ${item.line}: ${keyword} before the first FROM`)
  }
  return stages
}

/** The numeric user and group of the final stage (`USER uid[:gid]`). */
export function imageUser(text = readDockerfile()): { uid: number; gid: number } {
  const user = parseDockerfile(text)
    .at(-1)!
    .instructions.filter((i) => i.keyword === 'USER')
    .at(-1)?.args[0]
  const m = /^(\d+)(?::(\d+))?$/.exec(user ?? '')
  if (!m) throw new Error(`the final stage's USER is not numeric: ${user}`)
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) }
}

/**
 * Docker's .dockerignore rules for one context path: patterns apply in order, the last one that
 * matches the path or one of its parent directories decides, `!` re-includes. `*` and `?` stay
 * within one path element, `**` crosses them.
 */
export function inContext(ignore: string, path: string): boolean {
  const patterns = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const parts = path.split('/')
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'))
  let included = true
  for (const raw of patterns) {
    const negate = raw.startsWith('!')
    const p = (negate ? raw.slice(1) : raw).replace(/^\/+|\/+$/g, '')
    const re = new RegExp(
      `^${p
        .split('**')
        .map((s) =>
          s
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*')}$`,
    )
    if (candidates.some((c) => re.test(c))) included = negate
  }
  return included
}

/** Everything in `text` (a Dockerfile) that breaks the image rules; [] when none. */
export function dockerfileProblems(text: string, ignore: string): string[] {
  const problems: string[] = []
  const stages = parseDockerfile(text)
  const all = stages.flatMap((s) => s.instructions)
  for (const i of all) if (!KEYWORDS.has(i.keyword)) problems.push(`line ${i.line}: unknown instruction ${i.keyword}`)
  if (stages.length < 2) problems.push('not a multi-stage build')
  for (const s of stages)
    if (!/^node:24(-[a-z0-9.-]+)?(@sha256:[0-9a-f]{64})?$/.test(s.image))
      problems.push(`stage ${s.name ?? '(final)'}: base ${s.image} is not node:24`)

  const runs = all.filter((i) => i.keyword === 'RUN').map((i) => i.args.join(' '))
  if (runs.some((r) => /\bnpm (install|i|add)\b/.test(r))) problems.push('npm install: use npm ci (the lockfile)')
  if (!runs.some((r) => /\bnpm ci\b/.test(r))) problems.push('no npm ci')
  if (all.some((i) => i.keyword === 'ADD')) problems.push('ADD: use COPY')

  const final = stages.at(-1)!
  const byName = new Map(stages.filter((s) => s.name).map((s) => [s.name!, s]))
  const workdir = final.instructions.filter((i) => i.keyword === 'WORKDIR').at(-1)?.args[0]
  if (workdir !== '/app') problems.push(`final WORKDIR is ${workdir}, not /app`)
  const copied = new Map<string, string>() // destination (under /app) → where from
  for (const i of final.instructions.filter((i) => i.keyword === 'COPY')) {
    const from = i.flags.from ?? null
    const dest = i.args.at(-1) ?? ''
    const srcs = i.args.slice(0, -1)
    for (const src of srcs) {
      const allowed = from
        ? (src === '/app/node_modules' &&
            /--omit=dev/.test(
              byName
                .get(from)
                ?.instructions.filter((x) => x.keyword === 'RUN')
                .map((x) => x.args.join(' '))
                .join(' ') ?? '',
            )) ||
          /^\/app\/dist(\/[a-z]+)?$/.test(src)
        : [
            'package.json',
            'package-lock.json',
            'package*.json',
            'migrations',
            'libs/shared/db/pglite-template.tgz',
            'libs/shared/db/pglite-template.json',
          ].includes(src)
      if (!allowed)
        problems.push(
          `final stage copies ${from ? `${src} from ${from}` : src}: only dist/, production node_modules, migrations/, the embedded database's template and package*.json belong there`,
        )
      const target = dest === './' || dest === '.' ? src.split('/').at(-1)! : dest.replace(/^\.\//, '')
      copied.set(target, from ? `${from}:${src}` : src)
    }
  }
  for (const need of ['package.json', 'node_modules', 'migrations']) if (!copied.has(need)) problems.push(`final stage lacks ${need}`)
  if (![...copied.keys()].some((k) => k.startsWith('dist'))) problems.push('final stage lacks dist/')
  const nm = copied.get('node_modules')
  if (
    nm &&
    !/--omit=dev/.test(
      byName
        .get(nm.split(':')[0]!)
        ?.instructions.map((x) => x.args.join(' '))
        .join(' ') ?? '',
    )
  )
    problems.push('node_modules does not come from an npm ci --omit=dev stage')

  const users = final.instructions.filter((i) => i.keyword === 'USER')
  const user = users.at(-1)?.args[0] ?? ''
  if (!/^[1-9]\d*(:\d+)?$/.test(user)) problems.push(`final USER '${user || '(root)'}' is not a numeric non-root user`)
  const entry = final.instructions.filter((i) => i.keyword === 'ENTRYPOINT').at(-1)
  const cmd = final.instructions.filter((i) => i.keyword === 'CMD').at(-1)
  if (!cmd) problems.push('no default CMD')
  for (const i of [entry, cmd])
    if (i && !/^\s*\[/.test(i.text.replace(/^\w+\s*/, '')))
      problems.push(`${i.keyword} is in shell form: signals would reach a shell, not node`)
  const argv = [...(entry?.args ?? []), ...(cmd?.args ?? [])]
  if (argv[0] !== 'node' || !/^dist\/apps\/[a-z]+\/main\.js$/.test(argv[1] ?? ''))
    problems.push(`the default command ${argv.join(' ')} is not node dist/apps/<role>/main.js`)

  for (const i of all.filter((i) => i.keyword === 'COPY' && !i.flags.from)) {
    const srcs = [...i.args].slice(0, -1)
    for (const src of srcs)
      for (const path of src.includes('*') ? ['package.json', 'package-lock.json'] : [src])
        if (!inContext(ignore, path)) problems.push(`COPY ${src}: .dockerignore keeps it out of the build context`)
  }
  return problems
}
