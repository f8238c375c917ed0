// The newest official SDK (e2b@2.51.0, installed as `e2b-latest`) against
// prism-e2b-local: it creates with POST /v2/sandboxes and connects with
// POST /v2/sandboxes/{id}/connect, and sends none of its old defaults (timeout,
// pause memory), so the server supplies E2B's. The other files pin 2.49.1.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { Sandbox } from 'e2b-latest'

import { runId, startServer } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

async function create(opts = {}) {
  const sbx = await Sandbox.create({ ...server.opts, ...opts })
  server.sandboxIds.add(sbx.sandboxId)
  return sbx
}

test('v2 create without a timeout: the server gives E2B\'s 300 s; commands and files work', { timeout: 60_000 }, async () => {
  const sbx = await create({ metadata: { suite: 'latest', run: runId() } })
  const info = await sbx.getInfo()
  assert.equal(info.state, 'running')
  const ttl = info.endAt.getTime() - info.startedAt.getTime()
  assert.ok(ttl >= 295_000 && ttl <= 305_000, `endAt ~300 s after startedAt (${ttl} ms)`)
  const r = await sbx.commands.run('echo hello-$((6*7)); whoami')
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'hello-42\nuser\n')
  await sbx.files.write('/home/user/latest.txt', 'written by 2.51')
  assert.equal(await sbx.files.read('/home/user/latest.txt'), 'written by 2.51')
  await sbx.kill()
})

test('v2 connect: 200 to a running sandbox, a resume (memory kept) of a paused one', { timeout: 90_000 }, async () => {
  const sbx = await create({ timeoutMs: 120_000 })
  await sbx.files.write('/home/user/kept.txt', 'kept')
  const bg = await sbx.commands.run('sleep 3600', { background: true })
  // Running: connect answers 200 and keeps it running.
  const same = await Sandbox.connect(sbx.sandboxId, { ...server.opts })
  assert.equal(same.sandboxId, sbx.sandboxId)
  assert.equal((await same.getInfo()).state, 'running')
  // Paused with its memory (the SDK sends no memory field: the server's default keeps it).
  assert.equal(await sbx.pause(), true)
  assert.equal((await sbx.getInfo()).state, 'paused')
  const resumed = await Sandbox.connect(sbx.sandboxId, { ...server.opts })
  const info = await resumed.getInfo()
  assert.equal(info.state, 'running')
  // No timeout sent on connect: E2B's 300 s from now.
  const ttl = info.endAt.getTime() - Date.now()
  assert.ok(ttl > 250_000 && ttl <= 305_000, `connect set endAt ~300 s ahead (${ttl} ms)`)
  const procs = await resumed.commands.list()
  assert.ok(procs.some((p) => p.pid === bg.pid), 'the background process survived the pause')
  assert.equal(await resumed.files.read('/home/user/kept.txt'), 'kept')
  await resumed.kill()
})

test('v2 connect with onResume reboot: files kept, processes gone', { timeout: 90_000 }, async () => {
  const sbx = await create({ timeoutMs: 120_000 })
  await sbx.files.write('/home/user/kept.txt', 'kept')
  await sbx.commands.run('sleep 3600', { background: true })
  assert.equal(await sbx.pause(), true)
  const rebooted = await Sandbox.connect(sbx.sandboxId, { ...server.opts, onResume: 'reboot' })
  assert.equal((await rebooted.getInfo()).state, 'running')
  assert.equal(await rebooted.files.read('/home/user/kept.txt'), 'kept')
  const procs = await rebooted.commands.list()
  assert.ok(!procs.some((p) => p.cmd === 'sleep' || (p.args ?? []).includes('sleep 3600')), 'no process outlived the reboot')
  await rebooted.kill()
})

test('v2 create with egress rules it cannot enforce is refused, not ignored', { timeout: 30_000 }, async () => {
  await assert.rejects(
    create({ network: { denyOut: ['0.0.0.0/0'], allowOut: ['8.8.8.8'] } }),
    (err) => /cannot enforce egress rules/.test(err.message),
  )
})
