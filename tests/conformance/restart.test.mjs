// A server restart keeps sandboxes: prism-e2b-local is killed with SIGKILL and
// started again on the same state dir; through the official SDK, the running
// sandbox is still listed and running (booted again, files kept), the paused one
// is still paused and Sandbox.connect resumes it.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'

import { Sandbox } from 'e2b'

import { runId, startServer } from './harness.mjs'

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
