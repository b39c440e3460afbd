import { spawn } from 'node:child_process'
import { projectPath } from '../../libs/shared/paths.js'

export const CLI = projectPath('dist/apps/cli/main.js')
export const NODE = projectPath('node_modules/.bin/node')

/** Runs the built `wire` command line as a child process to its end. */
export function wire(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
  script = CLI,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [script, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
    child.stdin.end(input ?? '')
  })
}
