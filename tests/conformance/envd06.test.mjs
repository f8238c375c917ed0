// envd 0.6.x features with the official SDK: file metadata (0.6.2) written with
// files.write and read back from getInfo, list and the write's own answer; watch
// entry info (0.6.3) in watchDir events; watching with allowNetworkMounts (0.6.4,
// the last version the SDK gates a feature on): the SDK sends it, the watch works.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { FilesystemEventType } from 'e2b'

import { runId, startServer } from './harness.mjs'

let server
let sbx
before(async () => {
  server = await startServer()
  sbx = await server.create({ metadata: { suite: 'envd06', run: runId() }, timeoutMs: 300_000 })
})
after(async () => {
  await server?.stop()
})

/// Waits (bounded) until `pred()` holds.
async function eventually(pred, ms = 10_000) {
  const until = Date.now() + ms
  while (!pred()) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}

test('the announced envd version enables metadata, watch entries and network-mount watching', async () => {
  const info = await sbx.getInfo()
  assert.equal(info.envdVersion, '0.6.4')
})

test('file metadata: written with the file, in getInfo, list and the answer', { timeout: 30_000 }, async () => {
  if ((await server.isolation(sbx.sandboxId)) === 'gvisor') {
    // This runsc build's file system keeps no extended attributes: metadata is refused, typed.
    await assert.rejects(
      sbx.files.write('/workspace/md/a.txt', 'with metadata', { metadata: { author: 'alice' } }),
      (e) => e.name === 'InvalidArgumentError' && /no file metadata/.test(e.message),
    )
    return
  }
  const written = await sbx.files.write('/workspace/md/a.txt', 'with metadata', {
    metadata: { author: 'alice', 'build-id': '42' },
  })
  assert.deepEqual(written.metadata, { author: 'alice', 'build-id': '42' })
  // Both upload encodings carry it.
  const octet = await sbx.files.write('/workspace/md/b.txt', 'octet', {
    metadata: { kind: 'octet' },
    useOctetStream: true,
  })
  assert.deepEqual(octet.metadata, { kind: 'octet' })

  assert.deepEqual((await sbx.files.getInfo('/workspace/md/a.txt')).metadata, { author: 'alice', 'build-id': '42' })
  const listed = Object.fromEntries((await sbx.files.list('/workspace/md')).map((e) => [e.name, e]))
  assert.deepEqual(listed['b.txt'].metadata, { kind: 'octet' })

  // A file written without metadata has none; a rewrite with metadata replaces it.
  await sbx.files.write('/workspace/md/plain.txt', 'none')
  assert.equal((await sbx.files.getInfo('/workspace/md/plain.txt')).metadata, undefined)
  await sbx.files.write('/workspace/md/a.txt', 'again', { metadata: { author: 'bob' } })
  assert.deepEqual((await sbx.files.getInfo('/workspace/md/a.txt')).metadata, { author: 'bob' })

  // Kept as extended attributes on the file, where tools inside the sandbox see them.
  const attr = await sbx.commands.run(
    "/usr/bin/python3 -c \"import os; print(os.getxattr('/workspace/md/a.txt', 'user.e2b.author').decode())\"",
  )
  assert.equal(attr.stdout, 'bob\n')
})

test('watchDir with includeEntry: each event carries the entry as it is', { timeout: 30_000 }, async () => {
  await sbx.files.makeDir('/workspace/watched')
  const events = []
  const handle = await sbx.files.watchDir('/workspace/watched', (e) => events.push(e), { includeEntry: true })
  try {
    await sbx.files.write('/workspace/watched/new.txt', 'twelve bytes')
    // Each entry is stat-ed when its event is read: the create's may still be empty, the write's is whole.
    const whole = (e) => e.name === 'new.txt' && e.entry?.size === 12
    assert.ok(await eventually(() => events.some(whole)), JSON.stringify(events))
    const written = events.find(whole)
    assert.equal(written.entry.path, '/workspace/watched/new.txt')
    assert.equal(written.entry.type, 'file')
    assert.ok(events.filter((e) => e.name === 'new.txt').every((e) => e.entry?.path === '/workspace/watched/new.txt'))

    await sbx.files.remove('/workspace/watched/new.txt')
    assert.ok(await eventually(() => events.some((e) => e.type === FilesystemEventType.REMOVE)))
    // A removed entry cannot be stat-ed: its event has none.
    assert.equal(events.find((e) => e.type === FilesystemEventType.REMOVE).entry, undefined)
  } finally {
    await handle.stop()
  }
  // Without includeEntry the events stay bare.
  const bare = []
  const plain = await sbx.files.watchDir('/workspace/watched', (e) => bare.push(e))
  try {
    await sbx.files.write('/workspace/watched/other.txt', 'x')
    assert.ok(await eventually(() => bare.some((e) => e.name === 'other.txt')))
    assert.ok(bare.every((e) => e.entry === undefined))
  } finally {
    await plain.stop()
  }
})

test('watchDir with allowNetworkMounts (envd 0.6.4) is sent and watches as usual', { timeout: 30_000 }, async () => {
  const seen = []
  const handle = await sbx.files.watchDir('/workspace', (e) => seen.push(e), { allowNetworkMounts: true })
  try {
    await sbx.files.write('/workspace/net-allowed.txt', 'x')
    assert.ok(await eventually(() => seen.some((e) => e.name === 'net-allowed.txt')), JSON.stringify(seen))
  } finally {
    await handle.stop()
  }
})
