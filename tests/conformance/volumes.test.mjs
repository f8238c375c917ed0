// Volumes through the official SDK: the /volumes API (Volume.create, getInfo,
// list, connect, destroy), the volume-content API the SDK's Volume speaks with
// the volume's own token (files, directories, metadata, removal), volumeMounts at
// create (what one sandbox writes in its mount another one reads; a sandbox
// without the mount does not see it), a symlink a sandbox leaves in a volume
// never leads the content API outside it, a mounted volume cannot be destroyed,
// and volumes outlive a crash of the server.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { Sandbox, Volume } from 'e2b'

import { runId, startServer } from './harness.mjs'

let server
const servers = []
before(async () => {
  server = await startServer()
  servers.push(server)
  // The SDK's Volume sends content requests to E2B_VOLUME_API_URL (api.<domain> by default).
  process.env.E2B_VOLUME_API_URL = server.apiUrl
})
after(async () => {
  for (const s of servers.reverse()) await s.stop()
})

const volumeName = () => `vol-${runId()}`.replace(/[^A-Za-z0-9_-]/g, '-')

test('the volume API: create, info with its token, list, connect, destroy', { timeout: 30_000 }, async () => {
  const name = volumeName()
  const vol = await Volume.create(name, server.opts)
  assert.equal(vol.name, name)
  assert.ok(vol.volumeId && vol.token, 'an id and a content token')
  const info = await Volume.getInfo(vol.volumeId, server.opts)
  assert.deepEqual({ id: info.volumeId, name: info.name, token: info.token }, { id: vol.volumeId, name, token: vol.token })
  assert.ok((await Volume.list(server.opts)).some((v) => v.volumeId === vol.volumeId && v.name === name))
  await assert.rejects(Volume.create(name, server.opts), /exists/, 'a second volume of the same name is refused')
  const again = await Volume.connect(vol.volumeId, server.opts)
  assert.equal(again.token, vol.token)
  assert.equal(await Volume.destroy(vol.volumeId, server.opts), true)
  assert.equal(await Volume.destroy(vol.volumeId, server.opts), false, 'a second destroy finds nothing')
  await assert.rejects(Volume.getInfo(vol.volumeId, server.opts), (e) => e.name === 'VolumeNotFoundError' || /not found/i.test(e.message))
})

test('the content API: files, directories, metadata, listing and removal', { timeout: 30_000 }, async () => {
  const vol = await Volume.create(volumeName(), server.opts)
  try {
    await vol.writeFile('/hello.txt', 'Hello, volume')
    assert.equal(await vol.readFile('/hello.txt'), 'Hello, volume')
    const bytes = new Uint8Array([0, 1, 2, 250, 255])
    await vol.writeFile('/bytes.bin', bytes.buffer)
    assert.deepEqual(await vol.readFile('/bytes.bin', { format: 'bytes' }), bytes)
    await vol.writeFile('/hello.txt', 'replaced', { force: true })
    assert.equal(await vol.readFile('/hello.txt'), 'replaced')

    const info = await vol.getInfo('/hello.txt')
    assert.deepEqual([info.name, info.path, info.type, info.size, info.uid, info.gid, info.mode], ['hello.txt', '/hello.txt', 'file', 8, 1000, 1000, 0o644])
    assert.ok(info.mtime instanceof Date && !Number.isNaN(info.mtime.getTime()))

    await vol.makeDir('/nested/deep/path', { force: true })
    await vol.writeFile('/nested/deep/path/file.txt', 'nested')
    assert.equal(await vol.readFile('/nested/deep/path/file.txt'), 'nested')
    await assert.rejects(vol.makeDir('/missing/child'), (e) => e.name === 'VolumePathNotFoundError', 'no parents without force')
    await assert.rejects(vol.writeFile('/missing/file.txt', 'x'), (e) => e.name === 'VolumePathNotFoundError')

    const dir = await vol.makeDir('/owned', { uid: 0, gid: 0, mode: 0o700 })
    assert.deepEqual([dir.type, dir.uid, dir.gid, dir.mode & 0o777], ['directory', 0, 0, 0o700])
    const updated = await vol.updateMetadata('/hello.txt', { uid: 1001, gid: 1002, mode: 0o600 })
    assert.deepEqual([updated.uid, updated.gid, updated.mode], [1001, 1002, 0o600])

    const names = (await vol.list('/')).map((e) => e.name).sort()
    assert.deepEqual(names, ['bytes.bin', 'hello.txt', 'nested', 'owned'])
    const deep = (await vol.list('/nested', { depth: 3 })).map((e) => e.path).sort()
    assert.deepEqual(deep, ['/nested/deep', '/nested/deep/path', '/nested/deep/path/file.txt'])

    assert.equal(await vol.exists('/nested/deep/path/file.txt'), true)
    await vol.remove('/nested')
    assert.equal(await vol.exists('/nested'), false)
    assert.equal(await vol.exists('/no-such-file'), false)
    await assert.rejects(vol.remove('/no-such-file'), (e) => e.name === 'VolumePathNotFoundError')
    await assert.rejects(vol.list('/no-such-dir'), (e) => e.name === 'VolumePathNotFoundError')
    await assert.rejects(vol.updateMetadata('/no-such-file', { mode: 0o644 }), (e) => e.name === 'VolumePathNotFoundError')
    await assert.rejects(vol.readFile('/../../etc/hostname'), /climb above|400/, 'a path above the root is refused')

    // The volume's token, not the API key, opens its content; another volume's token does not.
    const other = await Volume.create(volumeName(), server.opts)
    const wrong = new Volume(vol.volumeId, vol.name, other.token)
    await assert.rejects(wrong.readFile('/hello.txt'), /401|token|auth/i)
    await Volume.destroy(other.volumeId, server.opts)
  } finally {
    await Volume.destroy(vol.volumeId, server.opts)
  }
})

test('volumeMounts: what one sandbox writes another one reads; a mounted volume stays until its sandboxes go', { timeout: 120_000 }, async () => {
  const vol = await Volume.create(volumeName(), server.opts)
  const writer = await server.create({ volumeMounts: { '/mnt/data': vol }, timeoutMs: 120_000 })
  const info = await writer.getInfo()
  assert.deepEqual(info.volumeMounts, [{ name: vol.name, path: '/mnt/data' }])
  await writer.files.write('/mnt/data/hello.txt', 'written by the writer')
  // bash's test, not stat or ls: gVisor (2022-12) answers coreutils' statx with EINVAL.
  const made = await writer.commands.run('echo from-a-command > /mnt/data/cmd.txt; for f in /mnt/data/cmd.txt /mnt/data; do [ -O $f ] && [ -G $f ] && echo "$(id -u):$(id -g)"; done')
  assert.equal(made.stdout, '1000:1000\n1000:1000\n', 'the sandbox\'s user owns what it writes, and the volume root')
  // The content API sees it with the ids it has inside.
  assert.equal(await vol.readFile('/hello.txt'), 'written by the writer')
  assert.equal((await vol.getInfo('/cmd.txt')).uid, 1000)
  // What the content API writes, the sandbox sees as its user's.
  await vol.writeFile('/from-api.txt', 'from the api')
  assert.equal((await writer.commands.run('cat /mnt/data/from-api.txt; [ -O /mnt/data/from-api.txt ] && echo " is mine"')).stdout, 'from the api is mine\n')

  // Mounted nosuid: a set-uid program the sandbox's root leaves there gives its user nothing.
  await writer.commands.run('cp /usr/bin/id /mnt/data/id && chmod 4755 /mnt/data/id', { user: 'root' })
  assert.equal((await writer.commands.run('/mnt/data/id -u')).stdout, '1000\n')
  // A second sandbox mounting it by name, elsewhere.
  const reader = await server.create({ volumeMounts: { '/home/user/shared': vol.name }, timeoutMs: 120_000 })
  assert.equal(await reader.files.read('/home/user/shared/hello.txt'), 'written by the writer')
  assert.equal((await reader.commands.run('/home/user/shared/id -u')).stdout, '1000\n')
  // One without the mount has none of it.
  const outsider = await server.create({ timeoutMs: 120_000 })
  const look = await outsider.commands.run('ls /mnt/data 2>&1; true')
  assert.ok(!look.stdout.includes('hello.txt'), look.stdout)

  await assert.rejects(Volume.destroy(vol.volumeId, server.opts), /mounted/, 'a mounted volume is not destroyed')
  await writer.kill()
  await reader.kill()
  await outsider.kill()
  assert.equal(await vol.readFile('/cmd.txt'), 'from-a-command\n', 'the volume outlives its sandboxes')
  assert.equal(await Volume.destroy(vol.volumeId, server.opts), true)
})

test('a symlink a sandbox leaves in a volume never leads the content API out of it', { timeout: 60_000 }, async () => {
  const vol = await Volume.create(volumeName(), server.opts)
  const sbx = await server.create({ volumeMounts: { '/mnt/v': vol }, timeoutMs: 60_000 })
  await sbx.commands.run('ln -s /etc/hostname /mnt/v/escape && ln -s ../../../../etc /mnt/v/up && mkdir -p /mnt/v/etc && echo inside > /mnt/v/etc/hostname')
  // Resolved inside the volume: /etc/hostname is the volume's own file, never the host's.
  assert.equal(await vol.readFile('/escape'), 'inside\n')
  assert.equal(await vol.readFile('/up/hostname'), 'inside\n')
  const link = (await vol.list('/')).find((e) => e.name === 'escape')
  assert.deepEqual([link.type, link.target], ['symlink', '/etc/hostname'])
  await sbx.kill()
  await Volume.destroy(vol.volumeId, server.opts)
})

// Namespaces engine: the init makes the mount point as the sandbox's root, in the sandbox's own
// files, before its root is the sandbox's: it never follows a symlink there. (gVisor's Sentry
// resolves a mount point inside the sandbox, so it has no host path to be led to.)
test('a mount point the sandbox turned into a symlink stops its next boot, never followed', { timeout: 60_000, skip: process.env.PRISM_E2B_ENGINE === 'gvisor' }, async () => {
  const vol = await Volume.create(volumeName(), server.opts)
  const sbx = await server.create({ volumeMounts: { '/home/user/vol': vol }, timeoutMs: 60_000 })
  const swapped = await sbx.commands.run('umount /home/user/vol && rmdir /home/user/vol && ln -s /etc /home/user/vol', { user: 'root' })
  assert.equal(swapped.exitCode, 0)
  assert.equal(await sbx.pause({ keepMemory: false }), true)
  await assert.rejects(Sandbox.connect(sbx.sandboxId, server.opts), /mounting \/home\/user\/vol: Not a directory/)
  await sbx.kill()
  await Volume.destroy(vol.volumeId, server.opts)
})

test('create refuses volume mounts it cannot make: unknown volume, system paths, overlapping paths', { timeout: 30_000 }, async () => {
  const vol = await Volume.create(volumeName(), server.opts)
  await assert.rejects(server.create({ volumeMounts: { '/mnt/x': 'no-such-volume' } }), /not found/)
  await assert.rejects(server.create({ volumeMounts: { '/usr/local/x': vol } }), /system/)
  await assert.rejects(server.create({ volumeMounts: { '/mnt/a': vol, '/mnt/a/b': vol } }), /overlap/)
  await assert.rejects(server.create({ volumeMounts: { 'relative/path': vol } }), /absolute/)
  await Volume.destroy(vol.volumeId, server.opts)
})

test('volumes and a mounting sandbox outlive a crash of the server', { timeout: 90_000 }, async () => {
  const first = await startServer()
  servers.push(first)
  process.env.E2B_VOLUME_API_URL = first.apiUrl
  const vol = await Volume.create(volumeName(), first.opts)
  await vol.writeFile('/kept.txt', 'kept across the crash')
  const sbx = await first.create({ volumeMounts: { '/mnt/data': vol }, timeoutMs: 300_000 })
  await sbx.files.write('/mnt/data/by-sandbox.txt', 'by the sandbox')

  await first.crash()
  const second = await startServer({ after: first })
  servers.push(second)
  process.env.E2B_VOLUME_API_URL = second.apiUrl
  const again = await Volume.connect(vol.volumeId, second.opts)
  assert.equal(again.token, vol.token)
  assert.equal(await again.readFile('/kept.txt'), 'kept across the crash')
  assert.equal(await again.readFile('/by-sandbox.txt'), 'by the sandbox')
  const back = await Sandbox.connect(sbx.sandboxId, { ...second.opts, timeoutMs: 300_000 })
  assert.equal((await back.commands.run('cat /mnt/data/kept.txt')).stdout, 'kept across the crash')
  await back.kill()
  assert.equal(await Volume.destroy(vol.volumeId, second.opts), true)
  process.env.E2B_VOLUME_API_URL = server.apiUrl
})
