// Templates, snapshots, metrics and network settings with the official SDK:
// an unknown template is the SDK's 404; createSnapshot / listSnapshots (all,
// per sandbox, by name) / Sandbox.create(snapshotId) / deleteSnapshot round
// trip as E2B's own snapshot tests expect; a snapshot survives a server
// restart; on the gvisor engine a snapshot holds the memory, so a command
// running in the source goes on in the sandboxes made from it; getMetrics is
// not empty; updateNetwork says it is unimplemented.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { Sandbox, SandboxError } from 'e2b'

import { runId, startServer, waitFor } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

async function allSnapshots(opts = {}) {
  const paginator = Sandbox.listSnapshots({ ...server.opts, ...opts })
  const out = []
  while (paginator.hasNext) out.push(...(await paginator.nextItems()))
  return out
}

test('an unknown template is a 404, as on E2B', { timeout: 60_000 }, async () => {
  await assert.rejects(
    Sandbox.create('no-such-template-' + runId(), { ...server.opts }),
    (err) => err instanceof SandboxError && /^404: /.test(err.message) && /not found/.test(err.message)
  )
})

test('snapshot round trip: create, list, new sandboxes from it, delete', { timeout: 120_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 120_000 })
  await sbx.files.makeDir('/home/user/app')
  await sbx.files.write('/home/user/app/config.json', '{"env": "test"}')

  const snap = await sbx.createSnapshot()
  assert.ok(snap.snapshotId.length > 0)
  assert.ok((await allSnapshots()).some((s) => s.snapshotId === snap.snapshotId))
  const mine = await sbx.listSnapshots({ ...server.opts }).nextItems()
  assert.ok(mine.some((s) => s.snapshotId === snap.snapshotId))
  assert.equal((await sbx.getInfo()).state, 'running', 'the source runs on')

  const one = await server.create({ template: snap.snapshotId })
  const two = await Sandbox.create(snap.snapshotId, { ...server.opts })
  server.sandboxIds.add(two.sandboxId)
  assert.equal(await one.files.read('/home/user/app/config.json'), '{"env": "test"}')
  await one.files.write('/home/user/app/config.json', 'changed')
  assert.equal(await two.files.read('/home/user/app/config.json'), '{"env": "test"}')
  assert.ok(await two.files.exists('/home/user/app'))

  assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, { ...server.opts }), true)
  assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId, { ...server.opts }), false)
  await assert.rejects(Sandbox.create(snap.snapshotId, { ...server.opts }), /^SandboxError|404/)
})

test('gvisor: a snapshot holds the memory, and its running command goes on in a sandbox made from it', { timeout: 180_000 }, async (t) => {
  const sbx = await server.create({ timeoutMs: 120_000 })
  if ((await server.isolation(sbx.sandboxId)) !== 'gvisor') {
    t.skip('a snapshot holds files only on this engine: memory needs the gvisor engine')
    return
  }
  const counter = await sbx.commands.run(
    "bash -c 'i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.05; done'",
    { background: true }
  )
  const count = async (s) => Number((await s.files.read('/tmp/count')).trim())
  await waitFor('the counter', async () => (await count(sbx)) >= 3)
  const snap = await sbx.createSnapshot()
  assert.equal((await sbx.getInfo()).state, 'running', 'the source runs on')

  const fresh = await server.create({ template: snap.snapshotId, envs: { ORIGIN: 'snapshot' } })
  const listed = await fresh.commands.list()
  assert.ok(listed.some((p) => p.pid === counter.pid && /while true/.test([p.cmd, ...p.args].join(' '))), JSON.stringify(listed))
  const first = await count(fresh)
  await waitFor('the restored counter to count on', async () => (await count(fresh)) > first)
  const env = await fresh.commands.run('echo $E2B_SANDBOX_ID $ORIGIN')
  assert.equal(env.stdout, `${fresh.sandboxId} snapshot\n`)
  // Its own process: killed there, it still counts in the source.
  assert.equal(await fresh.commands.kill(counter.pid), true)
  const stopped = await count(fresh)
  const inSource = await count(sbx)
  await waitFor('the source counter to count on', async () => (await count(sbx)) > inSource)
  assert.ok((await count(fresh)) <= stopped + 1, 'killed in the new sandbox')
  await Sandbox.deleteSnapshot(snap.snapshotId, { ...server.opts })
})

test('a named snapshot: its names and the name filter', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  const name = `snap-${runId()}`
  const snap = await sbx.createSnapshot({ name })
  assert.ok(snap.names.some((n) => n.includes(name)))
  const found = await Sandbox.listSnapshots({ ...server.opts, name }).nextItems()
  assert.deepEqual(found.map((s) => s.snapshotId), [snap.snapshotId])
  const none = await Sandbox.listSnapshots({ ...server.opts, name: `${name}-does-not-exist` }).nextItems()
  assert.deepEqual(none, [])
  await Sandbox.deleteSnapshot(snap.snapshotId, { ...server.opts })
})

test('getMetrics samples the sandbox', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  await sbx.files.write('/home/user/blob', 'x'.repeat(128 * 1024))
  const metrics = await sbx.getMetrics()
  assert.equal(metrics.length, 1)
  const [m] = metrics
  assert.ok(m.cpuCount >= 1)
  assert.ok(m.memTotal > 0)
  assert.ok(m.diskUsed >= 128 * 1024)
  assert.ok(m.diskTotal > m.diskUsed)
  assert.ok(m.timestamp instanceof Date && !Number.isNaN(m.timestamp.getTime()))
})

test('updateNetwork is reported as unimplemented', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  await assert.rejects(
    Sandbox.updateNetwork(sbx.sandboxId, { allowOut: ['1.1.1.1'] }, { ...server.opts }),
    (err) => err instanceof SandboxError && /^501: unimplemented/.test(err.message)
  )
})

test('a snapshot survives a server restart', { timeout: 120_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 120_000 })
  await sbx.files.write('/home/user/kept.txt', 'across restarts')
  const snap = await sbx.createSnapshot({ name: `kept-${runId()}` })

  await server.crash()
  server = await startServer({ after: server })
  assert.ok((await allSnapshots()).some((s) => s.snapshotId === snap.snapshotId))
  const fresh = await server.create({ template: snap.snapshotId })
  assert.equal(await fresh.files.read('/home/user/kept.txt'), 'across restarts')
})

test('signed upload and download URLs: accepted as signed, refused when altered or expired', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ timeoutMs: 60_000 })
  const path = '/home/user/signed file.txt'
  const up = await sbx.uploadUrl(path, { useSignatureExpiration: 60 })
  assert.ok(new URL(up).searchParams.get('signature').startsWith('v1_'))
  const form = new FormData()
  form.append('file', new Blob(['signed content']), 'signed file.txt')
  const uploaded = await fetch(up, { method: 'POST', body: form })
  assert.equal(uploaded.status, 200, await uploaded.text())

  const down = await sbx.downloadUrl(path)
  const got = await fetch(down)
  assert.equal(got.status, 200)
  assert.equal(await got.text(), 'signed content')

  const other = new URL(down)
  other.searchParams.set('path', '/home/user/other.txt')
  assert.equal((await fetch(other)).status, 401, 'a signature is for one path')
  const asWrite = new URL(up)
  assert.equal((await fetch(asWrite)).status, 401, 'an upload URL does not download')
  const expired = await sbx.downloadUrl(path, { useSignatureExpiration: -10 })
  assert.equal((await fetch(expired)).status, 401, 'an expired URL is refused')
})
