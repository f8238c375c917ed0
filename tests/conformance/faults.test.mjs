// Beyond the required scenarios: credentials, and the server's fault switches
// as the official SDK experiences them (429 + Retry-After, latency, a cut
// process stream, a sandbox killed mid-command, the peak-execs counter).
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'

import { AuthenticationError, CommandExitError, RateLimitError, Sandbox } from 'e2b'

import { runId, startServer, waitFor, within } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
afterEach(async () => {
  await server?.resetFaults()
})
after(async () => {
  await server?.stop()
})

test('a wrong API key gives AuthenticationError; admin routes need the admin token', { timeout: 30_000 }, async () => {
  const wrong = { ...server.opts, apiKey: 'e2b_0000000000000000000000000000000000000000' }
  await assert.rejects(Sandbox.create({ ...wrong, metadata: { run: runId() } }), AuthenticationError)
  await assert.rejects(Sandbox.list(wrong).nextItems(), AuthenticationError)

  const res = await fetch(new URL('/admin/faults/reset', server.apiUrl), { method: 'POST', headers: { 'X-Admin-Token': 'wrong' } })
  assert.equal(res.status, 401)
  await res.body?.cancel()
})

test('create answering 429 with Retry-After is retried by the SDK; beyond its retries it is RateLimitError', { timeout: 60_000 }, async () => {
  await server.throttleNextCreates(1, 1)
  const started = Date.now()
  const sbx = await server.create({ metadata: { run: runId() } })
  assert.ok(Date.now() - started >= 900, 'the SDK waited Retry-After (1 s) before retrying')
  assert.equal((await sbx.getInfo()).state, 'running')

  await server.throttleNextCreates(1, 1)
  await assert.rejects(server.create({ metadata: { run: runId() }, retries: 0 }), RateLimitError)
})

test('added latency delays the route it is set on', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() } })
  await server.addLatency('/process.Process/List', 1_500)
  let t = Date.now()
  await sbx.commands.list()
  let took = Date.now() - t
  assert.ok(took >= 1_450, `List took ${took} ms with 1500 ms latency`)
  // Other routes are not delayed.
  t = Date.now()
  await sbx.files.exists('/home/user')
  took = Date.now() - t
  assert.ok(took < 1_000, `Stat took ${took} ms with latency only on List`)
  await server.addLatency('/process.Process/List', 0)
  t = Date.now()
  await sbx.commands.list()
  took = Date.now() - t
  assert.ok(took < 1_000, `List took ${took} ms after clearing the latency`)
})

test('a process stream cut without an end event is never reported as success', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() } })
  await server.cutNextStreams(64, 1)
  const outcome = await within(15_000,
    sbx.commands.run('seq 1 100000').then((ok) => ({ ok }), (err) => ({ err })),
    'the cut stream to end')
  assert.ok(outcome.err, `a cut stream resolved as ${JSON.stringify(outcome.ok)?.slice(0, 200)}`)
  assert.ok(!(outcome.err instanceof CommandExitError),
    `no end event was sent, so there is no exit code to report (got CommandExitError ${outcome.err.exitCode})`)
  // Only the next stream was cut.
  assert.equal((await sbx.commands.run('echo fine')).stdout, 'fine\n')
})

test('a sandbox killed while it runs a command: the command fails, the sandbox is gone', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() } })
  await server.killDuringExec(sbx.sandboxId, 300)
  const outcome = await within(15_000,
    sbx.commands.run('sleep 30').then((ok) => ({ ok }), (err) => ({ err })),
    'the command of the killed sandbox to end')
  assert.ok(outcome.err, `the command of a killed sandbox resolved as ${JSON.stringify(outcome.ok)}`)
  await waitFor('the killed sandbox to be gone', async () => !(await sbx.isRunning()))
})

test('peak-execs counts concurrently running commands', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() } })
  const handles = await Promise.all([1, 2, 3].map(() => sbx.commands.run('sleep 30', { background: true })))
  const during = await server.peakExecs(sbx.sandboxId)
  assert.equal(during.peak, 3)
  assert.equal(during.running, 3)
  for (const h of handles) {
    assert.equal(await h.kill(), true)
    await assert.rejects(h.wait(), CommandExitError)
  }
  const afterwards = await waitFor('running to drop to 0', async () => {
    const now = await server.peakExecs(sbx.sandboxId)
    return now.running === 0 && now
  })
  assert.equal(afterwards.peak, 3)
  assert.equal(afterwards.running, 0)
})
