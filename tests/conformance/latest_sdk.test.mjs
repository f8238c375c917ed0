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

test('fork: each fork starts from the source\'s files, apart from it and from the others; the source runs on', { timeout: 120_000 }, async () => {
  const src = await create({ timeoutMs: 120_000, metadata: { suite: 'latest', role: 'source' } })
  await src.files.write('/home/user/state.txt', 'before the fork')
  const bg = await src.commands.run('sleep 3600', { background: true })
  const forks = await src.fork({ count: 2, timeoutMs: 60_000 })
  assert.equal(forks.length, 2)
  for (const f of forks) {
    assert.ok(f instanceof Sandbox, `a fork started: ${f}`)
    server.sandboxIds.add(f.sandboxId)
    assert.notEqual(f.sandboxId, src.sandboxId)
  }
  assert.notEqual(forks[0].sandboxId, forks[1].sandboxId)
  // The source runs on, with its id, and is not touched by what the forks write.
  assert.equal((await src.getInfo()).state, 'running')
  for (const [i, f] of forks.entries()) {
    assert.equal(await f.files.read('/home/user/state.txt'), 'before the fork')
    await f.files.write('/home/user/state.txt', `fork ${i}`)
    const info = await f.getInfo()
    assert.equal(info.state, 'running')
    assert.equal(info.metadata.role, 'source', 'a fork keeps the source\'s metadata')
    const ttl = info.endAt.getTime() - info.startedAt.getTime()
    assert.ok(ttl >= 55_000 && ttl <= 65_000, `the fork's own timeout (${ttl} ms)`)
  }
  assert.equal(await forks[0].files.read('/home/user/state.txt'), 'fork 0')
  assert.equal(await forks[1].files.read('/home/user/state.txt'), 'fork 1')
  assert.equal(await src.files.read('/home/user/state.txt'), 'before the fork')
  const r = await forks[1].commands.run('cat /home/user/state.txt; echo; whoami')
  assert.equal(r.stdout, 'fork 1\nuser\n')
  // gvisor checkpoints the source: its processes run on in every fork. Other engines fork files.
  const running = (await forks[0].commands.list()).some((p) => p.pid === bg.pid)
  assert.equal(running, process.env.PRISM_E2B_ENGINE === 'gvisor', 'the source\'s process in a fork')
  assert.ok((await src.commands.list()).some((p) => p.pid === bg.pid), 'the source\'s process runs on')
  // The temporary snapshot the forks started from is gone.
  const snaps = await Sandbox.listSnapshots({ ...server.opts, sandboxId: src.sandboxId }).nextItems()
  assert.equal(snaps.length, 0)
  for (const f of forks) await f.kill()
  await src.kill()
})

test('fork of a paused sandbox is a conflict; of an unknown one, not found', { timeout: 60_000 }, async () => {
  const src = await create({ timeoutMs: 120_000 })
  assert.equal(await src.pause(), true)
  await assert.rejects(Sandbox.fork(src.sandboxId, { ...server.opts }), (err) => /paused/.test(err.message))
  await assert.rejects(Sandbox.fork('nosuchsandbox', { ...server.opts }), (err) => err.name === 'SandboxNotFoundError')
  await src.kill()
})
