// Isolation engines side by side, in one run: sandbox create latency and
// `/bin/true` exec throughput (4 concurrent process.Process/Start streams) for
// each of prism-e2b-local's engines. Node builtins only (raw Connect envelopes).
//
//   node bench/engines.mjs build/release/prism-e2b-local [seconds per engine, default 10]
//
// Prints one line per engine; numbers are measured, nothing is asserted.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const bin = process.argv[2]
const seconds = Number(process.argv[3] ?? 10)
const engines = ['namespaces', 'mount-namespace', 'none']

async function startServer(engine) {
  const stateDir = mkdtempSync(join(tmpdir(), 'prism-e2b-bench-engines-'))
  const apiKey = `e2b_${randomBytes(16).toString('hex')}`
  const child = spawn(bin, ['--listen', '127.0.0.1:0', '--state-dir', stateDir, '--engine', engine], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, E2B_API_KEY: apiKey },
  })
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${engine}: server exited (${code})`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^E2B_API_URL=(\S+)/.exec(line)
      if (m) resolve(m[1])
    })
  })
  return { child, url, apiKey, stateDir }
}

async function createSandbox(s) {
  const res = await fetch(`${s.url}/sandboxes`, {
    method: 'POST',
    headers: { 'X-API-KEY': s.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ templateID: 'base', timeout: 600 }),
  })
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`)
  return res.json()
}

function envelope(obj) {
  const body = Buffer.from(JSON.stringify(obj))
  const head = Buffer.alloc(5)
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

const start = envelope({ process: { cmd: '/bin/true', args: [] } })

async function exec(s, sb) {
  const res = await fetch(`${s.url}/process.Process/Start`, {
    method: 'POST',
    headers: {
      'E2b-Sandbox-Id': sb.sandboxID,
      'X-Access-Token': sb.envdAccessToken,
      'Content-Type': 'application/connect+json',
    },
    body: start,
  })
  const text = Buffer.from(await res.arrayBuffer()).toString('latin1')
  if (res.status !== 200 || !text.includes('"end"')) throw new Error(`exec failed: ${res.status} ${text}`)
}

async function measure(engine) {
  const s = await startServer(engine)
  try {
    const creates = []
    for (let i = 0; i < 10; ++i) {
      const t0 = performance.now()
      const sb = await createSandbox(s)
      creates.push(performance.now() - t0)
      await fetch(`${s.url}/sandboxes/${sb.sandboxID}`, { method: 'DELETE', headers: { 'X-API-KEY': s.apiKey } })
    }
    creates.sort((a, b) => a - b)
    const sb = await createSandbox(s)
    for (let i = 0; i < 20; ++i) await exec(s, sb) // warm-up
    let done = 0
    const until = performance.now() + seconds * 1000
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < until) {
          await exec(s, sb)
          ++done
        }
      })
    )
    const rate = done / ((performance.now() - t0) / 1000)
    console.log(
      `${engine.padEnd(16)} create p50 ${creates[5].toFixed(1)} ms (min ${creates[0].toFixed(1)}, max ${creates[9].toFixed(1)})` +
        `   /bin/true x4: ${rate.toFixed(0)} execs/s`
    )
  } finally {
    s.child.kill('SIGTERM')
    await new Promise((r) => s.child.once('exit', r))
    rmSync(s.stateDir, { recursive: true, force: true })
  }
}

for (const engine of engines) await measure(engine)
