import { readFileSync } from 'node:fs'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { dockerfileProblems, imageUser, inContext, parseDockerfile, readDockerfile, readDockerignore } from './dockerfile.js'
import { render } from './render.js'
import { roleOf } from './roles.js'
import { BASE_DIR, byKind, containersOf } from './support.js'

// The image without a Docker engine: the Dockerfile parsed and held to the rules docs/deploy.md sets for the image, the
// build context it relies on, and its agreement with package.json, tsconfig and the manifests.

const DOCKERFILE = readDockerfile()
const IGNORE = readDockerignore()
const json = (p: string) => JSON.parse(readFileSync(projectPath(p), 'utf8'))

t.test('the Dockerfile keeps every rule', async (t) => {
  t.same(dockerfileProblems(DOCKERFILE, IGNORE), [])
  const stages = parseDockerfile(DOCKERFILE)
  t.same(
    stages.map((s) => s.name),
    ['build', 'deps', 'runtime'],
    'build, production deps, runtime',
  )
  t.ok(
    stages.every((s) => s.image === 'node:24-slim'),
    'node:24-slim everywhere (the ARG default)',
  )
  const build = stages[0]!.instructions.map((i) => i.args.join(' '))
  t.ok(
    build.some((a) => a === 'node node_modules/typescript/bin/tsc -p tsconfig.build.json'),
    'compiled with tsconfig.build.json, as npm run build does',
  )
})

t.test('the rules catch a broken Dockerfile (negative controls)', async (t) => {
  const broken: Array<[string, string, RegExp]> = [
    ['installs dev dependencies', DOCKERFILE.replace('npm ci --omit=dev', 'npm ci'), /--omit=dev/],
    ['runs as root', DOCKERFILE.replace('USER 1000:1000', 'USER root'), /numeric non-root/],
    ['has no USER', DOCKERFILE.replace(/^USER .*$/m, ''), /non-root/],
    ['uses npm install', DOCKERFILE.replace('RUN npm ci --ignore-scripts --no-audit --no-fund', 'RUN npm install'), /npm install/],
    ['another Node', DOCKERFILE.replace('ARG NODE_IMAGE=node:24-slim', 'ARG NODE_IMAGE=node:22-slim'), /not node:24/],
    [
      'copies the sources',
      DOCKERFILE.replace('COPY migrations ./migrations', 'COPY migrations ./migrations\nCOPY apps ./apps'),
      /copies apps/,
    ],
    ['forgets migrations', DOCKERFILE.replace('COPY migrations ./migrations', ''), /lacks migrations/],
    ['shell-form CMD', DOCKERFILE.replace('CMD ["dist/apps/server/main.js"]', 'CMD node dist/apps/server/main.js'), /shell form/],
    [
      'single stage',
      'FROM node:24-slim\nWORKDIR /app\nCOPY . .\nRUN npm ci\nUSER 1000\nCMD ["node", "dist/apps/server/main.js"]\n',
      /multi-stage/,
    ],
  ]
  for (const [what, text, problem] of broken) t.match(dockerfileProblems(text, IGNORE).join('\n'), problem, what)
  t.match(
    dockerfileProblems(DOCKERFILE, `${IGNORE}\nmigrations\n`).join('\n'),
    /COPY migrations: .dockerignore/,
    'a context path .dockerignore drops',
  )
})

t.test('.dockerignore admits what the build copies and nothing private', async (t) => {
  for (const p of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'apps/writer/main.ts',
    'libs/shared/paths.ts',
    'migrations/0001_create_signals.sql',
  ])
    t.ok(inContext(IGNORE, p), `${p} is in the context`)
  for (const p of [
    '.git/config',
    'node_modules/pg/package.json',
    'dist/apps/writer/main.js',
    '.env',
    '.wire/fingerprint.key',
    'test/helpers/stack.ts',
    'bench/results/baseline.json',
    'deploy/k8s/examples/secret.example.yaml',
    'secrets.env',
  ])
    t.notOk(inContext(IGNORE, p), `${p} is not`)
  t.notOk(inContext('node_modules\n', 'node_modules/pg/index.js'), '(a directory pattern covers its contents)')
  t.ok(inContext('*\n!apps\n', 'apps/writer/main.ts'), '(and ! re-includes a directory with its contents)')
})

t.test('the image agrees with package.json, tsconfig, the lockfile and the manifests', async (t) => {
  const pkg = json('package.json')
  t.equal(pkg.type, 'module', 'package.json (copied into the image) makes dist/ ES modules')
  t.match(pkg.devDependencies.node, /^\^?24\b/, 'npm scripts pin Node 24, the base image major')
  t.notOk(pkg.dependencies.node, '`node` is a devDependency, so npm ci --omit=dev skips it')
  const lock = json('package-lock.json')
  t.equal(lock.packages['node_modules/node']?.dev, true, 'the lockfile agrees')
  const prodScripts = Object.entries(lock.packages as Record<string, { dev?: boolean; hasInstallScript?: boolean }>)
    .filter(([k, v]) => k && !v.dev && v.hasInstallScript)
    .map(([k]) => k)
  t.same(prodScripts, [], 'no production package has an install script, so --ignore-scripts loses nothing')
  const ts = json('tsconfig.json').compilerOptions
  t.match(
    { outDir: ts.outDir, rootDir: ts.rootDir },
    { outDir: 'dist', rootDir: '.' },
    'apps/<role>/main.ts compiles to dist/apps/<role>/main.js',
  )
  t.same(json('tsconfig.build.json').extends, './tsconfig.json')

  const uid = imageUser()
  const final = parseDockerfile(DOCKERFILE).at(-1)!
  const copiedDist = final.instructions
    .filter((i) => i.keyword === 'COPY' && i.flags.from === 'build')
    .map((i) => i.args.at(-1)!.replace(/^\.\//, ''))
  for (const d of byKind(render(BASE_DIR), 'Deployment')) {
    const [c] = containersOf(d)
    const role = roleOf(c)
    t.ok(
      copiedDist.some((dir) => `dist/apps/${role}/main.js`.startsWith(`${dir}/`)),
      `${d.metadata.name}: the image holds dist/apps/${role}/main.js`,
    )
    t.equal(d.spec.template.spec.securityContext.runAsUser, uid.uid, `${d.metadata.name}: runs as the image's user`)
  }
  const expose = final.instructions.find((i) => i.keyword === 'EXPOSE')?.args[0]
  t.equal(expose, '4000', 'EXPOSE is the default SERVER_PORT')
})
