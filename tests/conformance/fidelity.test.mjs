// What E2B's own file tests expect of envd, with the official SDK: a symlink's
// info carries the absolute resolved target, removing a missing path succeeds,
// and a sandbox that boots again after a server restart gets a new boot id
// (namespaces engine; skipped, with the reason, on the others).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { FileType, Sandbox } from 'e2b'

import { startServer } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

test('getInfo of a symlink: the absolute resolved target', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  await sbx.files.write('test_file.txt', 'test')
  await sbx.commands.run('ln -s test_file.txt /home/user/test_link && ln -s /nowhere/x /home/user/dangling')
  const info = await sbx.files.getInfo('/home/user/test_link')
  assert.equal(info.type, FileType.SYMLINK)
  assert.equal(info.symlinkTarget, '/home/user/test_file.txt')
  const listed = (await sbx.files.list('/home/user')).find((e) => e.name === 'test_link')
  assert.equal(listed.symlinkTarget, '/home/user/test_file.txt')
  assert.equal((await sbx.files.getInfo('/home/user/dangling')).symlinkTarget, '/nowhere/x')
})

test('removing a path that is not there succeeds', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  await sbx.files.remove('non_existing_file.txt')
  await sbx.files.remove('/home/user/no/such/dir/file.txt')
})

test('a server crash and restart keeps the sandbox running (its envd outlived the server): the same boot id', { timeout: 120_000 }, async (t) => {
  const sbx = await server.create({ timeoutMs: 120_000 })
  const res = await fetch(new URL(`/sandboxes/${sbx.sandboxId}`, server.apiUrl), { headers: { 'X-API-KEY': server.apiKey } })
  if ((await res.json()).isolation !== 'namespaces') {
    t.skip('the server does not run the namespaces engine here (not root?): the host kernel boot id is shared')
    return
  }
  const bootId = async (s) => (await s.commands.run('cat /proc/sys/kernel/random/boot_id')).stdout.trim()
  const before = await bootId(sbx)
  await server.crash()
  server = await startServer({ after: server })
  const again = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 60_000 })
  const afterRestart = await bootId(again)
  assert.match(afterRestart, /^[0-9a-f-]{36}$/)
  assert.equal(afterRestart, before) // adopted, not booted again (a cold boot would draw a new id)
})

test('gzip uploads and downloads', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  const text = 'compressible '.repeat(10_000)
  await sbx.files.write('/home/user/gz.txt', text, { gzip: true })
  assert.equal(await sbx.files.read('/home/user/gz.txt'), text)
  assert.equal(await sbx.files.read('/home/user/gz.txt', { gzip: true }), text)
  // On the wire: the server answers gzip when asked to.
  const res = await fetch(new URL('/files?path=/home/user/gz.txt', server.sandboxUrl), {
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken, 'Accept-Encoding': 'gzip' },
  })
  assert.equal(res.headers.get('content-encoding'), 'gzip')
  assert.equal(await res.text(), text)
})
