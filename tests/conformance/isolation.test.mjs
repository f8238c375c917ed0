// Isolation on the namespaces engine, seen through the official SDK: root in a
// sandbox cannot read a root-only host file, `ps` shows only the sandbox, and a
// filesystem-only resume is a reboot (a new kernel boot id, as E2B's own SDK
// test expects) with the files kept. Skipped when the server reports another engine.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { after, before, test } from 'node:test'

import { CommandExitError, Sandbox } from 'e2b'

import { runId, startServer } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

/** The server's extra info field: which isolation engine the sandbox runs on. */
async function isolation(sbx) {
  const res = await fetch(new URL(`/sandboxes/${sbx.sandboxId}`, server.apiUrl), {
    headers: { 'X-API-KEY': server.apiKey },
  })
  return (await res.json()).isolation
}

test('root in a sandbox cannot read a root-only host file, and ps shows only the sandbox', { timeout: 60_000 }, async (t) => {
  const sbx = await server.create({ metadata: { suite: 'isolation', run: runId() }, timeoutMs: 120_000 })
  if ((await isolation(sbx)) !== 'namespaces') {
    await sbx.kill()
    t.skip('the server does not run the namespaces engine here (not root?)')
    return
  }
  const hostFile = `/etc/prism-e2b-conformance-${randomBytes(6).toString('hex')}`
  writeFileSync(hostFile, 'host secret\n')
  chmodSync(hostFile, 0o600)
  try {
    const who = await sbx.commands.run('id -u', { user: 'root' })
    assert.equal(who.stdout, '0\n')
    assert.equal((await sbx.commands.run(`test -e ${hostFile} && echo visible`, { user: 'root' })).stdout, 'visible\n')
    await assert.rejects(sbx.commands.run(`cat ${hostFile}`, { user: 'root' }), (err) => {
      assert.ok(err instanceof CommandExitError, `${err}`)
      assert.ok(!err.stdout.includes('host secret'))
      return true
    })
    await assert.rejects(sbx.commands.run(`touch /usr/${'x' + runId()}`, { user: 'root' }), CommandExitError)

    const ps = await sbx.commands.run('ps -eo args=', { user: 'root' })
    assert.ok(!ps.stdout.includes('prism-e2b-local'), `the server is visible in the sandbox:\n${ps.stdout}`)
    assert.match(ps.stdout, /^prism-e2b-envd init$/m)
  } finally {
    rmSync(hostFile, { force: true })
    await sbx.kill()
  }
})

test('a filesystem-only resume changes the boot id and keeps the files', { timeout: 90_000 }, async (t) => {
  const sbx = await server.create({ metadata: { suite: 'isolation', run: runId() }, timeoutMs: 120_000 })
  if ((await isolation(sbx)) !== 'namespaces') {
    await sbx.kill()
    t.skip('the server does not run the namespaces engine here (not root?)')
    return
  }
  const bootId = async (s) => (await s.commands.run('cat /proc/sys/kernel/random/boot_id')).stdout.trim()
  const before = await bootId(sbx)
  assert.match(before, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  await sbx.files.write('/home/user/kept.txt', 'kept')

  assert.equal(await sbx.pause({ keepMemory: true }), true)
  const thawed = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 120_000 })
  assert.equal(await bootId(thawed), before, 'a memory resume is not a reboot')

  assert.equal(await thawed.pause({ keepMemory: false }), true)
  const rebooted = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 120_000 })
  const afterReboot = await bootId(rebooted)
  assert.notEqual(afterReboot, before, 'a filesystem-only resume boots again')
  assert.equal(await rebooted.files.read('/home/user/kept.txt'), 'kept')
  await rebooted.kill()
})
