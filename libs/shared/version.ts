import { readFileSync } from 'node:fs'
import { projectPath } from './paths.js'

/** Wire's version: the server package's (the command line and the client are released with it). `--version` prints it. */
export function wireVersion(): string {
  return (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }).version
}
