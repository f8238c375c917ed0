// envd /files and filesystem.Filesystem with the official SDK: write, read,
// list, makeDir, remove, rename, exists.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { FileNotFoundError, FileType } from 'e2b'

import { runId, startServer } from './harness.mjs'

let server
let sbx
before(async () => {
  server = await startServer()
  sbx = await server.create({ metadata: { suite: 'files', run: runId() }, timeoutMs: 300_000 })
})
after(async () => {
  await server?.stop()
})

const byName = (entries) => Object.fromEntries(entries.map((e) => [e.name, e]))

test('files.write and files.read: text, bytes, overwrite, parent dirs', { timeout: 30_000 }, async () => {
  // Upload creates missing parent directories (envd.yaml POST /files).
  const info = await sbx.files.write('/workspace/ft/deep/er/a.txt', 'hello files\n')
  assert.equal(info.name, 'a.txt')
  assert.equal(info.path, '/workspace/ft/deep/er/a.txt')
  assert.equal(info.type, FileType.FILE)
  assert.equal(await sbx.files.read('/workspace/ft/deep/er/a.txt'), 'hello files\n')

  // Every byte value survives both upload encodings (multipart and octet-stream).
  const bytes = new Uint8Array(256 * 4).map((_, i) => i % 256)
  await sbx.files.write('/workspace/ft/bin.dat', bytes.buffer)
  assert.deepEqual(await sbx.files.read('/workspace/ft/bin.dat', { format: 'bytes' }), bytes)
  await sbx.files.write('/workspace/ft/bin2.dat', bytes.buffer, { useOctetStream: true })
  assert.deepEqual(await sbx.files.read('/workspace/ft/bin2.dat', { format: 'bytes' }), bytes)

  // Overwrite with shorter content truncates.
  await sbx.files.write('/workspace/ft/deep/er/a.txt', 'short')
  assert.equal(await sbx.files.read('/workspace/ft/deep/er/a.txt'), 'short')

  // An empty file reads back empty.
  await sbx.files.write('/workspace/ft/empty.txt', '')
  assert.equal(await sbx.files.read('/workspace/ft/empty.txt'), '')

  // Several files in one multipart upload.
  const multi = await sbx.files.write([
    { path: '/workspace/ft/m1.txt', data: 'one' },
    { path: '/workspace/ft/m2.txt', data: 'two' },
  ])
  assert.deepEqual(multi.map((w) => w.path).sort(), ['/workspace/ft/m1.txt', '/workspace/ft/m2.txt'])
  assert.equal(await sbx.files.read('/workspace/ft/m2.txt'), 'two')

  // What the SDK wrote is what a command in the sandbox sees.
  const res = await sbx.commands.run('cat /workspace/ft/m1.txt /workspace/ft/deep/er/a.txt')
  assert.equal(res.stdout, 'oneshort')

  await assert.rejects(sbx.files.read('/workspace/ft/missing.txt'), FileNotFoundError)
})

test('files.list, makeDir, exists', { timeout: 30_000 }, async () => {
  assert.equal(await sbx.files.makeDir('/workspace/lt'), true)
  assert.equal(await sbx.files.makeDir('/workspace/lt'), false, 'makeDir on an existing dir answers already_exists')
  assert.equal(await sbx.files.makeDir('/workspace/lt/sub'), true)
  await sbx.files.write('/workspace/lt/f.txt', '12345')
  await sbx.files.write('/workspace/lt/sub/nested.txt', 'n')

  const entries = await sbx.files.list('/workspace/lt')
  const m = byName(entries)
  assert.deepEqual(Object.keys(m).sort(), ['f.txt', 'sub'], 'depth 1 lists direct children only')
  assert.equal(m['f.txt'].type, FileType.FILE)
  assert.equal(m['f.txt'].path, '/workspace/lt/f.txt')
  assert.equal(m['f.txt'].size, 5)
  assert.equal(m.sub.type, FileType.DIR)
  assert.equal(m.sub.path, '/workspace/lt/sub')

  const deep = await sbx.files.list('/workspace/lt', { depth: 2 })
  assert.deepEqual(deep.map((e) => e.path).sort(),
    ['/workspace/lt/f.txt', '/workspace/lt/sub', '/workspace/lt/sub/nested.txt'])

  assert.equal(await sbx.files.exists('/workspace/lt'), true)
  assert.equal(await sbx.files.exists('/workspace/lt/f.txt'), true)
  assert.equal(await sbx.files.exists('/workspace/lt/nope'), false)

  const stat = await sbx.files.getInfo('/workspace/lt/f.txt')
  assert.equal(stat.type, FileType.FILE)
  assert.equal(stat.size, 5)
  assert.equal(stat.name, 'f.txt')

  // A directory made by a command is listed too (one tree per sandbox).
  await sbx.commands.run('mkdir /workspace/lt/from-cmd')
  assert.ok(byName(await sbx.files.list('/workspace/lt'))['from-cmd'], 'command-made dir listed')

  await assert.rejects(sbx.files.list('/workspace/does-not-exist'), FileNotFoundError)
})

test('files.rename and files.remove', { timeout: 30_000 }, async () => {
  await sbx.files.write('/workspace/rn/old.txt', 'payload')
  const moved = await sbx.files.rename('/workspace/rn/old.txt', '/workspace/rn/new.txt')
  assert.equal(moved.name, 'new.txt')
  assert.equal(moved.path, '/workspace/rn/new.txt')
  assert.equal(moved.type, FileType.FILE)
  assert.equal(await sbx.files.exists('/workspace/rn/old.txt'), false)
  assert.equal(await sbx.files.read('/workspace/rn/new.txt'), 'payload')

  // Directories move with their contents.
  await sbx.files.write('/workspace/rn/d1/inner.txt', 'inner')
  const movedDir = await sbx.files.rename('/workspace/rn/d1', '/workspace/rn/d2')
  assert.equal(movedDir.type, FileType.DIR)
  assert.equal(await sbx.files.read('/workspace/rn/d2/inner.txt'), 'inner')
  assert.equal(await sbx.files.exists('/workspace/rn/d1'), false)

  await assert.rejects(sbx.files.rename('/workspace/rn/ghost', '/workspace/rn/ghost2'), FileNotFoundError)

  await sbx.files.remove('/workspace/rn/new.txt')
  assert.equal(await sbx.files.exists('/workspace/rn/new.txt'), false)
  // Removing a non-empty directory removes it recursively.
  await sbx.files.remove('/workspace/rn/d2')
  assert.equal(await sbx.files.exists('/workspace/rn/d2'), false)
  assert.deepEqual(await sbx.files.list('/workspace/rn'), [])
  const res = await sbx.commands.run('ls -A /workspace/rn | wc -l')
  assert.equal(res.stdout.trim(), '0')
})

test('relative paths resolve against the user home', { timeout: 30_000 }, async () => {
  const info = await sbx.files.write('relative-dir/rel.txt', 'relative')
  assert.equal(info.path, '/home/user/relative-dir/rel.txt')
  assert.equal(await sbx.files.read('/home/user/relative-dir/rel.txt'), 'relative')
  assert.equal(await sbx.files.read('relative-dir/rel.txt'), 'relative')
  assert.equal(await sbx.files.exists('relative-dir'), true)
})

test('a large file round-trips intact', { timeout: 60_000 }, async () => {
  const size = 8 * 1024 * 1024 + 123
  const data = new Uint8Array(size)
  let x = 0x12345678
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    data[i] = x >>> 24
  }
  await sbx.files.write('/workspace/big.bin', data.buffer)
  const back = await sbx.files.read('/workspace/big.bin', { format: 'bytes' })
  assert.equal(back.length, size)
  assert.ok(Buffer.from(back).equals(Buffer.from(data)), 'contents equal')
  // Its size as the sandbox sees it (wc, not stat: the gvisor engine's runsc refuses coreutils' statx flags).
  const res = await sbx.commands.run('wc -c < /workspace/big.bin')
  assert.equal(res.stdout.trim(), String(size))
})

test('sandboxes have separate filesystems', { timeout: 30_000 }, async () => {
  const other = await server.create({ metadata: { suite: 'files', run: runId() } })
  await sbx.files.write('/workspace/only-in-first.txt', 'first')
  assert.equal(await other.files.exists('/workspace/only-in-first.txt'), false)
  await other.files.write('/home/user/only-in-second.txt', 'second')
  assert.equal(await sbx.files.exists('/home/user/only-in-second.txt'), false)
  await other.kill()
})
