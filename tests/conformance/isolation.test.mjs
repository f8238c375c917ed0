// Isolation on the namespaces engine, seen through the official SDK: root in a
// sandbox cannot read a root-only host file, `ps` shows only the sandbox, and a
// filesystem-only resume is a reboot (a new kernel boot id, as E2B's own SDK
// test expects) with the files kept. Skipped when the server reports another engine.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs'
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
    // Its /etc is a copy of the host's without what the host's other users cannot read.
    assert.equal((await sbx.commands.run(`test -e ${hostFile} || echo hidden`, { user: 'root' })).stdout, 'hidden\n')
    await assert.rejects(sbx.commands.run(`cat ${hostFile}`, { user: 'root' }), (err) => {
      assert.ok(err instanceof CommandExitError, `${err}`)
      assert.ok(!err.stdout.includes('host secret'))
      return true
    })
    // Its system is writable, and its own: the host's /usr is as it was.
    const written = `/usr/${'x' + runId()}`
    await sbx.commands.run(`touch ${written}`, { user: 'root' })
    assert.ok(!existsSync(written), `${written} reached the host`)

    const ps = await sbx.commands.run('ps -eo args=', { user: 'root' })
    assert.ok(!ps.stdout.includes('prism-e2b-local'), `the server is visible in the sandbox:\n${ps.stdout}`)
    assert.match(ps.stdout, /^prism-e2b-envd init$/m)
  } finally {
    rmSync(hostFile, { force: true })
    await sbx.kill()
  }
})

test('user installs with sudo into its own system; another sandbox sees nothing of it', { timeout: 90_000 }, async (t) => {
  const a = await server.create({ metadata: { suite: 'isolation', run: runId() }, timeoutMs: 120_000 })
  const b = await server.create({ metadata: { suite: 'isolation', run: runId() }, timeoutMs: 120_000 })
  try {
    if ((await isolation(a)) !== 'namespaces') {
      t.skip('the server does not run the namespaces engine here (not root?)')
      return
    }
    const tool = `/usr/local/bin/prism-${runId()}`
    const r = await a.commands.run(`sudo -n sh -c 'printf "#!/bin/sh\\necho installed\\n" > ${tool} && chmod 755 ${tool}' && ${tool}`)
    assert.equal(r.stdout, 'installed\n')
    assert.equal((await a.commands.run(`stat -c %U ${tool}`)).stdout, 'root\n')
    assert.ok(!existsSync(tool), `${tool} reached the host`)
    await assert.rejects(b.commands.run(`test -e ${tool}`), CommandExitError)
  } finally {
    await a.kill()
    await b.kill()
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
