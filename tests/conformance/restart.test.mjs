// A server restart keeps sandboxes: prism-e2b-local is killed with SIGKILL and
// started again on the same state dir; through the official SDK, the running
// sandbox is still listed and running (files kept), the paused one is still
// paused and Sandbox.connect resumes it. On the namespaces engine (envd inside
// the sandbox) the sandbox never stopped: a background command started before
// the crash is re-attached with commands.connect and its output goes on.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'

import { Sandbox } from 'e2b'

import { OutputCollector, runId, startServer, waitFor } from './harness.mjs'

const servers = []
after(async () => {
  for (const s of servers.reverse()) await s.stop()
})

test('kill -9 of the server and a restart on its state dir keep running and paused sandboxes', { timeout: 90_000 }, async () => {
  const first = await startServer()
  servers.push(first)
  const run = runId()
  const running = await first.create({ metadata: { suite: 'restart', run }, timeoutMs: 300_000 })
  const paused = await first.create({ metadata: { suite: 'restart', run }, timeoutMs: 300_000 })
  await running.files.write('/home/user/kept.txt', 'running kept')
  await paused.files.write('/home/user/kept.txt', 'paused kept')
  assert.equal(await paused.pause({ keepMemory: false }), true)
  const endAt = (await running.getInfo()).endAt.getTime()

  await first.crash()
  const second = await startServer({ after: first })
  servers.push(second)

  const listed = await Sandbox.list({ ...second.opts, query: { metadata: { run }, state: ['running', 'paused'] } }).nextItems()
  const states = Object.fromEntries(listed.map((s) => [s.sandboxId, s.state]))
  assert.deepEqual(states, { [running.sandboxId]: 'running', [paused.sandboxId]: 'paused' })

  const again = await Sandbox.connect(running.sandboxId, { ...second.opts, timeoutMs: 300_000 })
  assert.ok((await again.getInfo()).endAt.getTime() >= endAt, 'the deadline is not lost')
  assert.equal(await again.files.read('/home/user/kept.txt'), 'running kept')
  assert.equal((await again.commands.run('cat /home/user/kept.txt')).stdout, 'running kept')

  const resumed = await Sandbox.connect(paused.sandboxId, { ...second.opts, timeoutMs: 120_000 })
  assert.equal((await resumed.getInfo()).state, 'running')
  assert.equal((await resumed.commands.run('cat /home/user/kept.txt')).stdout, 'paused kept')
  await again.kill()
  await resumed.kill()
})

/** The server's extra info field: which isolation engine the sandbox runs on. */
async function isolation(server, sbx) {
  const res = await fetch(new URL(`/sandboxes/${sbx.sandboxId}`, server.apiUrl), {
    headers: { 'X-API-KEY': server.apiKey },
  })
  return (await res.json()).isolation
}

test('kill -9 of the server keeps a background command alive, re-attachable by pid', { timeout: 90_000 }, async (t) => {
  const first = await startServer()
  servers.push(first)
  const sbx = await first.create({ metadata: { suite: 'restart', run: runId() }, timeoutMs: 300_000 })
  if ((await isolation(first, sbx)) !== 'namespaces') {
    await sbx.kill()
    t.skip('processes outlive the server only on the namespaces engine (not root?)')
    return
  }
  const before = new OutputCollector()
  const counter = await sbx.commands.run('i=0; while true; do echo "n$i"; i=$((i+1)); sleep 0.05; done', {
    background: true,
    onStdout: before.onData,
  })
  await before.waitForText('n3')
  const seen = before.lines().length

  await first.crash()
  const second = await startServer({ after: first })
  servers.push(second)

  const again = await Sandbox.connect(sbx.sandboxId, { ...second.opts, timeoutMs: 300_000 })
  const after = new OutputCollector()
  const handle = await again.commands.connect(counter.pid, { onStdout: after.onData })
  // Numbers printed after the crash: the counter went on while no server ran.
  await waitFor(`a count past n${seen} (have ${after.text.slice(-40)})`,
    () => after.lines().some((line) => Number(line.slice(1)) > seen), { timeoutMs: 20_000 })
  const listed = await again.commands.list()
  assert.ok(listed.some((p) => p.pid === counter.pid), 'the counter is listed by its pid')
  await handle.kill()
  await again.kill()
})
