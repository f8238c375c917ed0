// Control plane with the official SDK: create with metadata, get info, list
// with a metadata filter (and state filter, paging), kill, timeout expiry.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

import { Sandbox, SandboxNotFoundError, TimeoutError } from 'e2b'

import { runId, startServer, waitFor } from './harness.mjs'

let server
before(async () => {
  server = await startServer()
})
after(async () => {
  await server?.stop()
})

async function listAll(opts) {
  const paginator = Sandbox.list({ ...server.opts, ...opts })
  const all = []
  while (paginator.hasNext) {
    all.push(...(await paginator.nextItems()))
  }
  return all
}

test('create with metadata: getInfo reports it', { timeout: 60_000 }, async () => {
  const metadata = { suite: 'conformance', run: runId(), 'with space': 'a b&c=d' }
  const before = Date.now()
  const sbx = await server.create({ metadata, timeoutMs: 120_000 })
  assert.ok(sbx.sandboxId, 'create returns a sandbox id')

  const info = await sbx.getInfo()
  assert.equal(info.sandboxId, sbx.sandboxId)
  assert.deepEqual(info.metadata, metadata)
  assert.equal(info.state, 'running')
  // The template name given at create (the SDK's default 'base') is reported,
  // as the template id or its alias.
  assert.ok(info.templateId === 'base' || info.name === 'base',
    `template reported: templateId=${info.templateId} name=${info.name}`)
  assert.ok(!Number.isNaN(info.startedAt.getTime()), 'startedAt is a date')
  assert.ok(info.startedAt.getTime() >= before - 5_000 && info.startedAt.getTime() <= Date.now() + 5_000,
    `startedAt ${info.startedAt.toISOString()} is about now`)
  // endAt = start + the timeout the SDK sent (120 s, whole seconds on the wire).
  const lifetime = info.endAt.getTime() - info.startedAt.getTime()
  assert.ok(Math.abs(lifetime - 120_000) <= 5_000, `endAt - startedAt = ${lifetime} ms, expected ~120000`)
  assert.deepEqual(info.lifecycle, { onTimeout: 'kill', autoResume: false })
  assert.equal(await sbx.isRunning(), true)

  // The static form, and connect to a running sandbox, see the same metadata.
  const same = await Sandbox.getInfo(sbx.sandboxId, server.opts)
  assert.deepEqual(same.metadata, metadata)
  const again = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 120_000 })
  assert.deepEqual((await again.getInfo()).metadata, metadata)
})

test('Sandbox.list with a metadata filter', { timeout: 60_000 }, async () => {
  const run = runId()
  // A value needing URL encoding checks the server decodes the SDK's doubly
  // encoded `metadata` query parameter (see SandboxPaginator.nextItems).
  const a = await server.create({ metadata: { run, role: 'a', note: 'x y&z=1' } })
  const b = await server.create({ metadata: { run, role: 'b' } })
  const other = await server.create({ metadata: { run: `${run}-other`, role: 'a' } })

  const byRun = await listAll({ query: { metadata: { run } } })
  assert.deepEqual(byRun.map((s) => s.sandboxId).sort(), [a.sandboxId, b.sandboxId].sort())
  for (const s of byRun) {
    assert.equal(s.state, 'running')
    assert.equal(s.metadata.run, run)
  }

  const byRole = await listAll({ query: { metadata: { run, role: 'a' } } })
  assert.deepEqual(byRole.map((s) => s.sandboxId), [a.sandboxId])
  assert.deepEqual(byRole[0].metadata, { run, role: 'a', note: 'x y&z=1' })

  const byEncoded = await listAll({ query: { metadata: { note: 'x y&z=1' } } })
  assert.deepEqual(byEncoded.map((s) => s.sandboxId), [a.sandboxId])

  const none = await listAll({ query: { metadata: { run, role: 'c' } } })
  assert.deepEqual(none, [])

  // Unfiltered list includes all three.
  const ids = (await listAll({})).map((s) => s.sandboxId)
  for (const s of [a, b, other]) assert.ok(ids.includes(s.sandboxId), `${s.sandboxId} in unfiltered list`)
})

test('Sandbox.list with a state filter and x-next-token paging', { timeout: 60_000 }, async () => {
  const run = runId()
  const made = []
  for (let i = 0; i < 3; i++) made.push(await server.create({ metadata: { run, i: String(i) } }))
  assert.equal(await made[2].pause(), true)

  const paused = await listAll({ query: { metadata: { run }, state: ['paused'] } })
  assert.deepEqual(paused.map((s) => s.sandboxId), [made[2].sandboxId])
  assert.equal(paused[0].state, 'paused')

  const running = await listAll({ query: { metadata: { run }, state: ['running'] } })
  assert.deepEqual(running.map((s) => s.sandboxId).sort(), [made[0].sandboxId, made[1].sandboxId].sort())

  // limit 1: one sandbox per page, pages chained by x-next-token, no repeats.
  const paginator = Sandbox.list({ ...server.opts, query: { metadata: { run } }, limit: 1 })
  const seen = []
  let pages = 0
  while (paginator.hasNext) {
    const page = await paginator.nextItems()
    pages++
    assert.ok(page.length <= 1, `page ${pages} has ${page.length} items with limit 1`)
    seen.push(...page.map((s) => s.sandboxId))
    assert.ok(pages <= 4, 'paging terminates')
  }
  assert.deepEqual([...seen].sort(), made.map((s) => s.sandboxId).sort())
  assert.equal(new Set(seen).size, seen.length, 'no sandbox repeated across pages')
})

test('kill: the sandbox is gone', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() } })
  assert.equal(await sbx.isRunning(), true)
  assert.equal(await sbx.kill(), true)

  assert.equal(await sbx.isRunning(), false, 'isRunning after kill (envd /health answers 502)')
  await assert.rejects(sbx.getInfo(), SandboxNotFoundError)
  const ids = (await listAll({})).map((s) => s.sandboxId)
  assert.ok(!ids.includes(sbx.sandboxId), 'killed sandbox not listed')
  // A second kill finds nothing: the SDK maps 404 to false.
  assert.equal(await Sandbox.kill(sbx.sandboxId, server.opts), false)
  // envd of a killed sandbox answers 502 (Connect code unavailable). The SDK
  // reports that as SandboxNotFoundError when starting a process
  // (handleProcessStartEvent) and as TimeoutError on unary calls and /files.
  await assert.rejects(sbx.commands.run('true'), SandboxNotFoundError)
  await assert.rejects(sbx.commands.list(), TimeoutError)
  await assert.rejects(sbx.files.read('/home/user/x'), TimeoutError)
  await assert.rejects(Sandbox.connect(sbx.sandboxId, server.opts), SandboxNotFoundError)
})

test('timeout expiry: a sandbox past its endAt is gone', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() }, timeoutMs: 3_000 })
  assert.equal(await sbx.isRunning(), true)
  const info = await sbx.getInfo()
  const lifetime = info.endAt.getTime() - info.startedAt.getTime()
  assert.ok(Math.abs(lifetime - 3_000) <= 1_500, `endAt - startedAt = ${lifetime} ms, expected ~3000`)

  await waitFor('sandbox to expire', async () => !(await sbx.isRunning()), { timeoutMs: 15_000, intervalMs: 250 })
  await assert.rejects(sbx.getInfo(), SandboxNotFoundError)
  const ids = (await listAll({})).map((s) => s.sandboxId)
  assert.ok(!ids.includes(sbx.sandboxId), 'expired sandbox not listed')
})

test('setTimeout extends a sandbox past its original endAt', { timeout: 60_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() }, timeoutMs: 3_000 })
  await sbx.setTimeout(60_000)
  const info = await sbx.getInfo()
  const remaining = info.endAt.getTime() - Date.now()
  assert.ok(remaining > 50_000 && remaining <= 65_000, `endAt is ~60 s away (${remaining} ms)`)
  await sleep(4_500)
  assert.equal(await sbx.isRunning(), true, 'still running after the original 3 s timeout')
  assert.equal((await sbx.getInfo()).state, 'running')
})

test('connect to a running sandbox extends its timeout and never shortens it', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() }, timeoutMs: 10_000 })
  await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 60_000 })
  let remaining = (await sbx.getInfo()).endAt.getTime() - Date.now()
  assert.ok(remaining > 50_000 && remaining <= 65_000, `connect extended endAt to ~60 s (${remaining} ms)`)
  await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 5_000 })
  remaining = (await sbx.getInfo()).endAt.getTime() - Date.now()
  assert.ok(remaining > 50_000, `a shorter connect timeout did not shorten endAt (${remaining} ms left)`)
})

test('setTimeout can also shorten the timeout', { timeout: 30_000 }, async () => {
  const sbx = await server.create({ metadata: { run: runId() }, timeoutMs: 120_000 })
  await sbx.setTimeout(2_000)
  const remaining = (await sbx.getInfo()).endAt.getTime() - Date.now()
  assert.ok(remaining <= 2_500, `endAt ~2 s away (${remaining} ms)`)
  await waitFor('sandbox to expire', async () => !(await sbx.isRunning()), { timeoutMs: 15_000, intervalMs: 250 })
  await assert.rejects(sbx.getInfo(), SandboxNotFoundError)
})

test('timeout expiry with onTimeout pause: paused with its memory, not killed', { timeout: 60_000 }, async () => {
  const sbx = await server.create({
    metadata: { run: runId() },
    timeoutMs: 3_000,
    lifecycle: { onTimeout: 'pause' },
  })
  const info = await sbx.getInfo()
  assert.deepEqual(info.lifecycle, { onTimeout: 'pause', autoResume: false })
  await sbx.files.write('/home/user/kept.txt', 'kept')
  const bg = await sbx.commands.run('sleep 600', { background: true, timeoutMs: 0 })
  await waitFor('sandbox to auto-pause', async () => (await sbx.getInfo()).state === 'paused',
    { timeoutMs: 15_000, intervalMs: 250 })
  // A paused sandbox never expires: still paused well after its endAt.
  await sleep(4_000)
  assert.equal((await sbx.getInfo()).state, 'paused')
  const resumed = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 60_000 })
  assert.equal(await resumed.files.read('/home/user/kept.txt'), 'kept')
  // autoPauseMemory defaults to true: the process survived.
  assert.ok((await resumed.commands.list()).some((p) => p.pid === bg.pid), `pid ${bg.pid} survived the auto-pause`)
})

test('timeout expiry with onTimeout pause without memory: files kept, processes gone', { timeout: 60_000 }, async () => {
  const sbx = await server.create({
    metadata: { run: runId() },
    timeoutMs: 3_000,
    lifecycle: { onTimeout: { action: 'pause', keepMemory: false } },
  })
  await sbx.files.write('/home/user/kept.txt', 'kept')
  const bg = await sbx.commands.run('sleep 600', { background: true, timeoutMs: 0 })
  await waitFor('sandbox to auto-pause', async () => (await sbx.getInfo()).state === 'paused',
    { timeoutMs: 15_000, intervalMs: 250 })
  const resumed = await Sandbox.connect(sbx.sandboxId, { ...server.opts, timeoutMs: 60_000 })
  assert.equal(await resumed.files.read('/home/user/kept.txt'), 'kept')
  assert.ok(!(await resumed.commands.list()).some((p) => p.pid === bg.pid), `pid ${bg.pid} gone after a memoryless auto-pause`)
})
