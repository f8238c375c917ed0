// Pause / resume with the official SDK: pause keeping memory (processes are
// frozen and continue after Sandbox.connect), pause without memory (a reboot:
// processes gone, files kept), and an injected 503 on pause (ServiceBusyError,
// sandbox left running).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

import { CommandExitError, NotFoundError, Sandbox, SandboxNotFoundError, ServiceBusyError, TimeoutError } from 'e2b'

import { OutputCollector, runId, startServer, waitFor, within } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

// Prints `tick N` every 100 ms; N keeps counting from memory, so a process
// that survived a pause continues the sequence instead of restarting it.
const COUNTER = 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.1; done'

function lastTick(collector) {
  const ticks = collector.lines().filter((l) => l.startsWith('tick ')).map((l) => Number(l.slice(5)))
  return ticks.length ? ticks[ticks.length - 1] : -1
}

test('pause with keepMemory true, then Sandbox.connect: the background process is still alive', { timeout: 90_000 }, async () => {
  const sbx = await server.create({ metadata: { suite: 'pause', run: runId() }, timeoutMs: 120_000 })
  const original = new OutputCollector()
  const counter = await sbx.commands.run(COUNTER, { background: true, timeoutMs: 0, onStdout: original.onData })
  await waitFor('a few ticks', () => lastTick(original) >= 3)

  assert.equal(await sbx.pause({ keepMemory: true }), true)
  assert.equal((await sbx.getInfo()).state, 'paused')
  // A paused sandbox's envd is unreachable, as on E2B (health answers 502).
  assert.equal(await sbx.isRunning(), false)

  // Frozen: no new ticks while paused (allow in-flight output to land first).
  await sleep(300)
  const frozenAt = lastTick(original)
  await sleep(1_500)
  assert.equal(lastTick(original), frozenAt, 'the counter does not advance while paused')

  // Pausing again answers 409, which the SDK reports as false.
  assert.equal(await sbx.pause(), false)

  const resumed = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 120_000 })
  const info = await resumed.getInfo()
  assert.equal(info.state, 'running')
  const remaining = info.endAt.getTime() - Date.now()
  assert.ok(remaining > 100_000 && remaining <= 125_000, `connect set endAt ~120 s ahead (${remaining} ms)`)
  assert.equal(await resumed.isRunning(), true)

  // Same process: still listed under the same pid ...
  const listed = (await resumed.commands.list()).find((p) => p.pid === counter.pid)
  assert.ok(listed, `pid ${counter.pid} still listed after resume`)
  assert.deepEqual(listed.args, ['-l', '-c', COUNTER])
  // ... re-attachable, continuing its count from memory rather than restarting.
  const reattached = new OutputCollector()
  const handle = await resumed.commands.connect(counter.pid, { onStdout: reattached.onData, timeoutMs: 0 })
  await waitFor('ticks after resume', () => reattached.lines().length >= 3)
  const firstAfter = Number(reattached.lines()[0].slice(5))
  assert.ok(firstAfter > frozenAt, `counter continued (${firstAfter} after ${frozenAt}), not restarted`)
  // The output stream opened before the pause continues too; on gvisor a checkpoint cuts envd's
  // connections (runsc cannot save them), so there only the re-attached stream carries on.
  const checkpointed = (await server.isolation(sbx.sandboxId)) === 'gvisor'
  if (!checkpointed) await waitFor('the original stream to continue', () => lastTick(original) > frozenAt + 2)

  assert.equal(await resumed.commands.kill(counter.pid), true)
  await assert.rejects(handle.wait(), CommandExitError)
  // (A cut stream fails without an exit code: never a success.)
  await assert.rejects(counter.wait(), checkpointed ? Error : CommandExitError)
  await resumed.kill()
})

test('pause with keepMemory false, then Sandbox.connect: processes are gone, files kept', { timeout: 90_000 }, async () => {
  const sbx = await server.create({ metadata: { suite: 'pause', run: runId() }, timeoutMs: 120_000 })
  await sbx.files.write('/home/user/persist.txt', 'survives reboot')
  const original = new OutputCollector()
  const counter = await sbx.commands.run(COUNTER, { background: true, timeoutMs: 0, onStdout: original.onData })
  await waitFor('a few ticks', () => lastTick(original) >= 2)

  assert.equal(await sbx.pause({ keepMemory: false }), true)
  assert.equal((await sbx.getInfo()).state, 'paused')

  const resumed = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 120_000 })
  assert.equal((await resumed.getInfo()).state, 'running')
  assert.equal(await resumed.isRunning(), true)

  const pids = (await resumed.commands.list()).map((p) => p.pid)
  assert.ok(!pids.includes(counter.pid), `old pid ${counter.pid} not listed after a reboot (${pids})`)
  assert.equal(await resumed.commands.kill(counter.pid), false, 'old pid unknown: kill answers not_found')
  await assert.rejects(resumed.commands.connect(counter.pid), NotFoundError)
  // The stream of the process that the memoryless pause killed has ended,
  // and not with exit code 0.
  const outcome = await within(10_000, counter.wait().then((ok) => ({ ok }), (err) => ({ err })),
    'the killed process stream to end')
  assert.ok(outcome.err, `a process killed by the pause reported success: ${JSON.stringify(outcome.ok)}`)

  assert.equal(await resumed.files.read('/home/user/persist.txt'), 'survives reboot')
  const res = await resumed.commands.run('cat /home/user/persist.txt')
  assert.equal(res.stdout, 'survives reboot')
  await resumed.kill()
})

test('injected 503 on pause gives ServiceBusyError and the sandbox stays running', { timeout: 120_000 }, async () => {
  const sbx = await server.create({ metadata: { suite: 'pause', run: runId() }, timeoutMs: 120_000 })
  const bg = await sbx.commands.run('sleep 300', { background: true, timeoutMs: 0 })

  await server.failNextPauses(1)
  await assert.rejects(sbx.pause(), (err) => {
    assert.ok(err instanceof ServiceBusyError, `got ${err?.name}: ${err?.message}`)
    assert.equal(err.statusCode, 503)
    return true
  })

  const info = await sbx.getInfo()
  assert.equal(info.state, 'running')
  assert.equal(await sbx.isRunning(), true)
  // Nothing was changed: processes still there, commands still run.
  assert.ok((await sbx.commands.list()).some((p) => p.pid === bg.pid), 'background process still listed')
  assert.equal((await sbx.commands.run('echo alive')).stdout, 'alive\n')

  // Only the next N pauses fail: the following one pauses.
  assert.equal(await sbx.pause(), true)
  assert.equal((await sbx.getInfo()).state, 'paused')
  await sbx.kill()
})

test('envd calls to a paused sandbox fail; kill of a paused sandbox works', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ metadata: { suite: 'pause', run: runId() }, timeoutMs: 120_000 })
  assert.equal(await sbx.pause(), true)
  // As on E2B, envd of a paused sandbox answers 502 (see the kill test for
  // how the SDK maps that).
  assert.equal(await sbx.isRunning(), false)
  await assert.rejects(sbx.commands.run('true'), SandboxNotFoundError)
  await assert.rejects(sbx.commands.list(), TimeoutError)
  await assert.rejects(sbx.files.read('/home/user/x'), TimeoutError)
  assert.equal(await sbx.kill(), true)
  await assert.rejects(sbx.getInfo(), (err) => err instanceof NotFoundError)
})
