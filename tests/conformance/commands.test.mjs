// envd process.Process with the official SDK: run (stdout, stderr, exit codes,
// env, cwd), background + connect + sendStdin + kill, list.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'

import { AuthenticationError, CommandExitError, NotFoundError, TimeoutError } from 'e2b'

import { OutputCollector, runId, startServer, waitFor, within } from './harness.mjs'

let server
let sbx
before(async () => {
  server = await startServer()
  sbx = await server.create({
    metadata: { suite: 'commands', run: runId() },
    timeoutMs: 300_000,
    envs: { SBX_LEVEL: 'from-create', OVERRIDDEN: 'sandbox' },
  })
})
after(async () => {
  await server?.stop()
})

test('commands.run: stdout', { timeout: 30_000 }, async () => {
  const streamed = new OutputCollector()
  const res = await sbx.commands.run('echo hello; printf "second line\\n"', { onStdout: streamed.onData })
  assert.equal(res.exitCode, 0)
  assert.equal(res.stdout, 'hello\nsecond line\n')
  assert.equal(res.stderr, '')
  assert.equal(streamed.text, res.stdout, 'onStdout saw exactly the stdout')
})

test('commands.run: stderr', { timeout: 30_000 }, async () => {
  const streamed = new OutputCollector()
  const res = await sbx.commands.run('echo oops >&2', { onStderr: streamed.onData })
  assert.equal(res.exitCode, 0)
  assert.equal(res.stdout, '')
  assert.equal(res.stderr, 'oops\n')
  assert.equal(streamed.text, 'oops\n')
})

test('commands.run: larger output arrives complete and in order', { timeout: 30_000 }, async () => {
  const res = await sbx.commands.run('seq 1 20000')
  const lines = res.stdout.trimEnd().split('\n')
  assert.equal(lines.length, 20000)
  assert.equal(lines[0], '1')
  assert.equal(lines[19999], '20000')
  assert.ok(lines.every((l, i) => l === String(i + 1)), 'every line in order')
})

test('commands.run: non-zero exit throws CommandExitError with exitCode', { timeout: 30_000 }, async () => {
  await assert.rejects(
    sbx.commands.run('echo out; echo err >&2; exit 3'),
    (err) => {
      assert.ok(err instanceof CommandExitError, `got ${err?.name}: ${err?.message}`)
      assert.equal(err.exitCode, 3)
      assert.equal(err.stdout, 'out\n')
      assert.equal(err.stderr, 'err\n')
      return true
    }
  )
  // Exit codes are exact, up to 255.
  await assert.rejects(sbx.commands.run('exit 255'), (err) => err instanceof CommandExitError && err.exitCode === 255)
  // A command that does not exist: bash exits 127.
  await assert.rejects(sbx.commands.run('definitely-not-a-command-xyz'),
    (err) => err instanceof CommandExitError && err.exitCode === 127 && /not found/.test(err.stderr))
})

test('a command ended by a signal reports exit code -1', { timeout: 30_000 }, async () => {
  // envd reports Go's ProcessState.ExitCode(), which is -1 for a signalled process.
  await assert.rejects(sbx.commands.run('kill -TERM $$'), (err) => {
    assert.ok(err instanceof CommandExitError, `got ${err?.name}: ${err?.message}`)
    assert.equal(err.exitCode, -1)
    return true
  })
})

test('UTF-8 output and input survive chunking', { timeout: 30_000 }, async () => {
  const text = 'héllo wörld ✓ 日本語 🚀'
  const res = await sbx.commands.run(`printf '%s\n' '${text}'; printf '%s' '${text}' >&2`)
  assert.equal(res.stdout, `${text}\n`)
  assert.equal(res.stderr, text)
  const h = await sbx.commands.run('head -n 1', { background: true, stdin: true })
  await h.sendStdin(`${text}\n`)
  assert.equal((await within(10_000, h.wait(), 'head to exit')).stdout, `${text}\n`)
})

test('concurrent commands each get their own output and exit code', { timeout: 60_000 }, async () => {
  const n = 16
  const results = await Promise.allSettled(Array.from({ length: n }, (_, i) =>
    sbx.commands.run(`for k in 1 2 3; do echo "cmd${i} line$k"; sleep 0.05; done; exit ${i % 4}`)))
  results.forEach((r, i) => {
    const out = r.status === 'fulfilled' ? r.value : r.reason
    assert.equal(out.exitCode, i % 4, `command ${i} exit code`)
    if (i % 4 !== 0) assert.ok(out instanceof CommandExitError, `command ${i} rejected with CommandExitError`)
    assert.equal(out.stdout, `cmd${i} line1\ncmd${i} line2\ncmd${i} line3\n`, `command ${i} output`)
  })
})

test('commands.run: env', { timeout: 30_000 }, async () => {
  const res = await sbx.commands.run('printf "%s|%s" "$FOO" "$EMPTY_OK"', {
    envs: { FOO: 'bar baz=1', EMPTY_OK: '' },
  })
  assert.equal(res.stdout, 'bar baz=1|')
  // Envs are per command, not sticky.
  const next = await sbx.commands.run('printf "%s" "${FOO-unset}"')
  assert.equal(next.stdout, 'unset')
})

test('sandbox-level envs from create reach every command; per-command envs win', { timeout: 30_000 }, async () => {
  const res = await sbx.commands.run('printf "%s|%s" "$SBX_LEVEL" "$OVERRIDDEN"', { envs: { OVERRIDDEN: 'command' } })
  assert.equal(res.stdout, 'from-create|command')
  const plain = await sbx.commands.run('printf "%s" "$OVERRIDDEN"')
  assert.equal(plain.stdout, 'sandbox')
})

test('users: commands run as "user" by default, as root on request; unknown users are refused', { timeout: 30_000 }, async () => {
  // With envdVersion >= 0.4.0 the SDK sends no Authorization header unless `user`
  // is given, then `Basic base64("<user>:")` (envd/rpc.ts authenticationHeader).
  const plain = await sbx.commands.run('whoami; id -u; printf "%s" "$HOME"')
  assert.equal(plain.stdout, 'user\n1000\n/home/user')
  const root = await sbx.commands.run('whoami; id -u', { user: 'root' })
  assert.equal(root.stdout, 'root\n0\n')
  await assert.rejects(sbx.commands.run('true', { user: 'no-such-user-xyz' }), AuthenticationError)
  await assert.rejects(sbx.files.read('/home/user/.profile', { user: 'no-such-user-xyz' }), AuthenticationError)
  await assert.rejects(sbx.files.list('/home/user', { user: 'no-such-user-xyz' }), AuthenticationError)

  // Files are owned by the user that wrote them.
  await sbx.files.write('/home/user/owned-by-user.txt', 'u')
  assert.equal((await sbx.files.getInfo('/home/user/owned-by-user.txt')).owner, 'user')
  await sbx.files.write('/workspace/owned-by-root.txt', 'r', { user: 'root' })
  assert.equal((await sbx.files.getInfo('/workspace/owned-by-root.txt')).owner, 'root')
})

test('commands.run: cwd', { timeout: 30_000 }, async () => {
  await sbx.commands.run('mkdir -p /workspace/cwd-check && touch /workspace/cwd-check/marker')
  const res = await sbx.commands.run('pwd; ls', { cwd: '/workspace/cwd-check' })
  assert.equal(res.stdout, '/workspace/cwd-check\nmarker\n')
  const home = await sbx.commands.run('pwd', { cwd: '/home/user' })
  assert.equal(home.stdout, '/home/user\n')
  // A file the SDK wrote is what the command sees at the same path.
  await sbx.files.write('/workspace/cwd-check/from-sdk.txt', 'via files api')
  const cat = await sbx.commands.run('cat from-sdk.txt', { cwd: '/workspace/cwd-check' })
  assert.equal(cat.stdout, 'via files api')
})

test('commands.run: the default cwd is the user home, /home/user', { timeout: 30_000 }, async () => {
  const res = await sbx.commands.run('pwd')
  assert.equal(res.stdout, '/home/user\n')
})

test('commands.run: timeoutMs bounds the command (deadline_exceeded is TimeoutError) and kills it', { timeout: 30_000 }, async () => {
  const tag = runId()
  const started = Date.now()
  await assert.rejects(sbx.commands.run(`sleep 20 # ${tag}`, { timeoutMs: 1_000 }), TimeoutError)
  const took = Date.now() - started
  assert.ok(took >= 900 && took < 8_000, `gave up after ${took} ms with timeoutMs 1000`)
  // envd kills the process when the deadline passes.
  await waitFor('the timed-out command to be gone from commands.list', async () =>
    !(await sbx.commands.list()).some((p) => p.args.some((a) => a.includes(tag))), { timeoutMs: 5_000 })
})

test('background command + commands.connect + sendStdin + kill', { timeout: 60_000 }, async () => {
  const fromStart = new OutputCollector()
  const handle = await sbx.commands.run('echo ready; while IFS= read -r line; do echo "got:$line"; done', {
    background: true,
    stdin: true,
    timeoutMs: 0,
    onStdout: fromStart.onData,
  })
  assert.ok(Number.isInteger(handle.pid) && handle.pid > 0, `pid ${handle.pid}`)
  await fromStart.waitForText('ready\n')

  // Re-attach to the running process by pid: the connected stream carries
  // output produced from then on.
  const fromConnect = new OutputCollector()
  const attached = await sbx.commands.connect(handle.pid, { onStdout: fromConnect.onData, timeoutMs: 0 })
  assert.equal(attached.pid, handle.pid)

  await sbx.commands.sendStdin(handle.pid, 'ping\n')
  await fromConnect.waitForText('got:ping\n')
  await fromStart.waitForText('got:ping\n')
  // Through the handle too, with bytes.
  await attached.sendStdin(new TextEncoder().encode('pong\n'))
  await fromConnect.waitForText('got:pong\n')
  await fromStart.waitForText('got:pong\n')

  assert.equal(await sbx.commands.kill(handle.pid), true)

  // Both streams end with the SIGKILL outcome: exit code -1, which the SDK
  // turns into CommandExitError.
  for (const [name, h] of [['started', handle], ['connected', attached]]) {
    await assert.rejects(h.wait(), (err) => {
      assert.ok(err instanceof CommandExitError, `${name} handle: got ${err?.name}: ${err?.message}`)
      assert.equal(err.exitCode, -1, `${name} handle exit code after SIGKILL`)
      return true
    })
  }
  assert.equal(handle.stdout, 'ready\ngot:ping\ngot:pong\n')

  // The pid is gone: not listed, kill answers not_found (false), connect fails.
  const pids = (await sbx.commands.list()).map((p) => p.pid)
  assert.ok(!pids.includes(handle.pid), `pid ${handle.pid} no longer listed`)
  assert.equal(await sbx.commands.kill(handle.pid), false)
  await assert.rejects(sbx.commands.connect(handle.pid), NotFoundError)
  await assert.rejects(sbx.commands.sendStdin(handle.pid, 'x\n'), NotFoundError)
})

test('closeStdin: the command sees end of input and exits 0', { timeout: 30_000 }, async () => {
  const h = await sbx.commands.run('cat; echo "[eof]"', { background: true, stdin: true, timeoutMs: 0 })
  await h.sendStdin('line one\n')
  await h.sendStdin('line two\n')
  await h.closeStdin()
  const res = await within(10_000, h.wait(), 'cat to exit after closeStdin')
  assert.equal(res.exitCode, 0)
  assert.equal(res.stdout, 'line one\nline two\n[eof]\n')
})

test('a command started without stdin: true reads end of input at once', { timeout: 30_000 }, async () => {
  const res = await within(10_000, sbx.commands.run('cat; echo done'), 'cat with closed stdin to exit')
  assert.equal(res.stdout, 'done\n')
})

test('commands.list shows running commands with their config', { timeout: 60_000 }, async () => {
  const tag = runId()
  const cmd = `sleep 300 # ${tag}`
  const handle = await sbx.commands.run(cmd, {
    background: true,
    timeoutMs: 0,
    cwd: '/workspace',
    envs: { LIST_TAG: tag },
  })

  const listed = await waitFor('the background command in commands.list', async () =>
    (await sbx.commands.list()).find((p) => p.pid === handle.pid))
  assert.equal(listed.cmd, '/bin/bash')
  assert.deepEqual(listed.args, ['-l', '-c', cmd])
  assert.equal(listed.envs.LIST_TAG, tag)
  assert.equal(listed.cwd, '/workspace')

  // A second one: both listed.
  const second = await sbx.commands.run('sleep 300', { background: true, timeoutMs: 0 })
  const pids = (await sbx.commands.list()).map((p) => p.pid)
  assert.ok(pids.includes(handle.pid) && pids.includes(second.pid), `both listed: ${pids}`)

  assert.equal(await handle.kill(), true)
  assert.equal(await second.kill(), true)
  await assert.rejects(handle.wait(), CommandExitError)
  await assert.rejects(second.wait(), CommandExitError)
  const after = (await sbx.commands.list()).map((p) => p.pid)
  assert.ok(!after.includes(handle.pid) && !after.includes(second.pid), `killed commands not listed: ${after}`)
})

test('a finished background command: wait() gives its result and it is no longer listed', { timeout: 30_000 }, async () => {
  const h = await sbx.commands.run('sleep 0.3; echo done', { background: true })
  const res = await h.wait()
  assert.equal(res.exitCode, 0)
  assert.equal(res.stdout, 'done\n')
  const pids = (await sbx.commands.list()).map((p) => p.pid)
  assert.ok(!pids.includes(h.pid))
})
