import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startStack } from '../helpers/stack.js'

// The embedded database holds every signal and the board's fingerprint key: nobody but its owner
// may read or change it, whatever the umask (a first start left 968 of 1,091 files 0666 under 0022).

/** Counts `dir`'s tree by kind and mode: `{ 'dir 700': 26, 'file 600': 980 }`. */
function modes(dir: string, into: Record<string, number> = {}): Record<string, number> {
  for (const name of readdirSync(dir)) {
    const st = lstatSync(join(dir, name))
    const key = `${st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other'} ${(st.mode & 0o777).toString(8)}`
    into[key] = (into[key] ?? 0) + 1
    if (st.isDirectory()) modes(join(dir, name), into)
  }
  return into
}

t.test('a first embedded start under umask 0, in a loose existing directory, leaves 0700 directories of 0600 files', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'wire-modes-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const dir = join(parent, 'data')
  const umask = process.umask(0)
  t.teardown(() => void process.umask(umask))
  // made before, by hand: world-writable, with a world-writable file in it
  mkdirSync(join(dir, 'old'), { recursive: true, mode: 0o777 })
  chmodSync(dir, 0o777)
  writeFileSync(join(dir, 'old', 'notes'), 'x', { mode: 0o666 })
  const s = await startStack(t, { noRedis: true, env: { DATABASE_URL: '', WIRE_DATA_DIR: dir } })
  t.equal((await s.publish({ $type: 'broadcast', text: 'kept private' })).statusCode, 200)
  t.equal(lstatSync(dir).mode & 0o777, 0o700, 'the data directory is 0700')
  t.equal(lstatSync(join(dir, 'old', 'notes')).mode & 0o777, 0o600, 'a file that was there is tightened')
  const open = modes(dir)
  t.same(Object.keys(open).sort(), ['dir 700', 'file 600'], `while open: ${JSON.stringify(open)}`)
  t.ok(open['file 600']! > 500, `${open['file 600']} files, all 0600`)
  await s.close()
  await s.infra.close() // the database: handed to the board, so closed apart
  const closed = modes(dir)
  t.same(Object.keys(closed).sort(), ['dir 700', 'file 600'], `after close: ${JSON.stringify(closed)}`)
  t.equal(process.umask(0), 0, "the process's umask is back after close")
})
