// Isolation engines side by side, in one run: sandbox create latency and
// `/bin/true` exec throughput (4 concurrent process.Process/Start streams) for
// each of prism-e2b-local's engines, in alternating rounds (the order flips every
// round) with the load average of each measurement, then each engine's ratio to
// the first one listed, round by round. Node builtins only (raw Connect envelopes).
//
//   node bench/engines.mjs build/release/prism-e2b-local [seconds per engine, default 10]
//        [rounds, default 5] [engines, default namespaces,mount-namespace]
//
// An engine may carry server flags: `namespaces@disk-mb=0` runs `--engine namespaces --disk-mb 0`.
//
// `namespaces` runs envd inside the sandbox (every exec a proxied request to its agent);
// `mount-namespace` is the in-server path (the server's own envd forks each command into a
// mount namespace). Numbers are measured, nothing is asserted.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const bin = process.argv[2]
const seconds = Number(process.argv[3] ?? 10)
const rounds = Number(process.argv[4] ?? 5)
const engines = (process.argv[5] ?? 'namespaces,mount-namespace').split(',')

async function startServer(engine) {
  const stateDir = mkdtempSync(join(tmpdir(), 'prism-e2b-bench-engines-'))
  const apiKey = `e2b_${randomBytes(16).toString('hex')}`
  // "namespaces@disk-mb=0": the engine with extra server flags (--disk-mb 0).
  const [name, ...flags] = engine.split('@')
  const extra = flags.flatMap((f) => {
    const [k, v] = f.split('=')
    return v === undefined ? [`--${k}`] : [`--${k}`, v]
  })
  const child = spawn(bin, ['--listen', '127.0.0.1:0', '--state-dir', stateDir, '--engine', name, ...extra], {
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
  const load0 = loadavg()[0]
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
    const load = loadavg()[0]
    console.log(
      `${engine.padEnd(16)} create p50 ${creates[5].toFixed(1)} ms (min ${creates[0].toFixed(1)}, max ${creates[9].toFixed(1)})` +
        `   /bin/true x4: ${rate.toFixed(0)} execs/s   load ${load0.toFixed(1)}-${load.toFixed(1)}`
    )
    return { rate, create: creates[5] }
  } finally {
    s.child.kill('SIGTERM')
    await new Promise((r) => s.child.once('exit', r))
    rmSync(s.stateDir, { recursive: true, force: true })
  }
}

const results = Object.fromEntries(engines.map((e) => [e, []]))
for (let round = 0; round < rounds; ++round) {
  console.log(`round ${round + 1}`)
  const order = round % 2 === 0 ? engines : [...engines].reverse()
  for (const engine of order) results[engine].push(await measure(engine))
}
const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b)
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2
}
const base = engines[0]
for (const engine of engines.slice(1)) {
  const ratios = results[base].map((r, i) => r.rate / results[engine][i].rate)
  console.log(
    `${base} / ${engine} execs/s per round: ${ratios.map((r) => r.toFixed(2)).join(' ')}` +
      `   median ${median(ratios).toFixed(2)} (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})`
  )
}
for (const engine of engines)
  console.log(
    `${engine.padEnd(16)} median of ${rounds}: ${median(results[engine].map((r) => r.rate)).toFixed(0)} execs/s, ` +
      `create p50 ${median(results[engine].map((r) => r.create)).toFixed(1)} ms`
  )
