// Harness for the conformance suite: starts prism-e2b-local as a subprocess on
// an ephemeral loopback port, hands the official SDK its connection options,
// reaches the server's admin (fault injection) routes, and cleans up.
//
// The binary comes from env PRISM_E2B_LOCAL (set by CTest). Secrets (the API
// key and admin token) are random per server and never printed.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'

import { Sandbox } from 'e2b'

const STARTUP_TIMEOUT_MS = 20_000
// A clean stop kills every sandbox and unmounts its disk; a SIGKILL leaves both behind
// (loop devices and mounts outlive the test run), so the grace is generous.
const STOP_GRACE_MS = 30_000

// Every server this process started; killed on exit even if an `after` hook
// never ran (a crashed test file must not leave servers or sandboxes behind).
const liveChildren = new Set()
process.on('exit', () => {
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL')
    } catch {
      // already gone
    }
  }
})

function serverBinary() {
  const bin = process.env.PRISM_E2B_LOCAL
  if (!bin) {
    throw new Error(
      'PRISM_E2B_LOCAL is not set: point it at the prism-e2b-local executable ' +
        '(ctest sets it; by hand: PRISM_E2B_LOCAL=build/prism-e2b-local node --test ...)'
    )
  }
  return bin
}

/**
 * A running prism-e2b-local.
 *
 * `opts` are the SDK connection options for this server; spread them into
 * every SDK call (`Sandbox.create({ ...server.opts, ... })`).
 */
export class LocalServer {
  constructor(child, stateDir, apiKey, adminToken, apiUrl, sandboxUrl) {
    this.child = child
    this.stateDir = stateDir
    this.apiKey = apiKey
    this.adminToken = adminToken
    this.apiUrl = apiUrl
    this.sandboxUrl = sandboxUrl
    this.sandboxIds = new Set()
    this.stderrTail = []
    this.exited = null
    /** Resolves once the server process has exited. */
    this.whenExited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exited = { code, signal }
        liveChildren.delete(child)
        // A crash (not our SIGTERM/SIGKILL, not a clean exit) says why, even where no test asks.
        if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGKILL')
          console.error(`prism-e2b-local exited (${JSON.stringify(this.exited)}); stderr tail:\n${this.stderrTail.join('\n')}`)
        resolve()
      })
    })
  }

  get opts() {
    return {
      apiKey: this.apiKey,
      apiUrl: this.apiUrl,
      sandboxUrl: this.sandboxUrl,
      requestTimeoutMs: 30_000,
    }
  }

  /** Creates a sandbox on this server and remembers it for cleanup. */
  async create(sandboxOpts = {}) {
    const sbx = await Sandbox.create({ ...this.opts, ...sandboxOpts })
    this.sandboxIds.add(sbx.sandboxId)
    return sbx
  }

  /** Raw call to an admin route, authenticated with X-Admin-Token. */
  async admin(method, path, body) {
    const res = await fetch(new URL(path, this.apiUrl), {
      method,
      headers: {
        'X-Admin-Token': this.adminToken,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (!res.ok) {
      throw new Error(`admin ${method} ${path} answered ${res.status}: ${text}`)
    }
    return text ? JSON.parse(text) : undefined
  }

  /** The next `count` pause calls answer 503 and leave the sandbox running. */
  async failNextPauses(count) {
    return this.admin('POST', '/admin/faults/pause-busy', { count })
  }

  /** The next `count` creates answer 429 with `Retry-After: retryAfter` (seconds). */
  async throttleNextCreates(count, retryAfter) {
    return this.admin('POST', '/admin/faults/create-throttle', { count, retryAfter })
  }

  /** Adds `ms` before answering requests whose path starts with `route` (0 clears). */
  async addLatency(route, ms) {
    return this.admin('POST', '/admin/faults/latency', { route, ms })
  }

  /** The next `count` process streams are cut after `afterBytes` bytes, with no end event. */
  async cutNextStreams(afterBytes, count = 1) {
    return this.admin('POST', '/admin/faults/cut-stream', { afterBytes, count })
  }

  /** Kills the sandbox `afterMs` after its next process starts. */
  async killDuringExec(sandboxID, afterMs) {
    return this.admin('POST', '/admin/faults/kill-during-exec', { sandboxID, afterMs })
  }

  /** Clears every fault switch. */
  async resetFaults() {
    return this.admin('POST', '/admin/faults/reset')
  }

  /** `{ peak, running }`: concurrently running processes in a sandbox. */
  async peakExecs(sandboxId) {
    return this.admin('GET', `/admin/sandboxes/${encodeURIComponent(sandboxId)}/peak-execs`)
  }

  /** The sandbox info's extra field `isolation`: the engine the sandbox runs on. */
  async isolation(sandboxId) {
    const res = await fetch(`${this.apiUrl}/sandboxes/${encodeURIComponent(sandboxId)}`, {
      headers: { 'X-API-KEY': this.apiKey },
    })
    return (await res.json()).isolation
  }

  /** Throws if the server process has died (so a test reports a crash, not a hang). */
  assertAlive() {
    if (this.exited) {
      throw new Error(
        `prism-e2b-local exited (${JSON.stringify(this.exited)}); stderr tail:\n` +
          this.stderrTail.join('\n')
      )
    }
  }

  /** SIGKILLs the server (no cleanup at all) and waits until it is gone; the state dir stays. */
  async crash() {
    this.child.kill('SIGKILL')
    await this.whenExited
  }

  /**
   * Kills remembered sandboxes, then the server, then removes its state dir. Throws when a
   * clean stop left a mount (a sandbox's disk) under the state dir.
   */
  async stop() {
    let leftMounts = []
    if (!this.exited) {
      for (const id of this.sandboxIds) {
        await Sandbox.kill(id, this.opts).catch(() => undefined)
      }
      this.child.kill('SIGTERM')
      // The grace period, then SIGKILL; the unref'd timer does not keep node alive once the server is gone.
      await Promise.race([this.whenExited, sleep(STOP_GRACE_MS, undefined, { ref: false })])
      if (!this.exited) {
        console.error(`prism-e2b-local did not stop within ${STOP_GRACE_MS} ms of SIGTERM; SIGKILL leaves its sandboxes behind`)
        this.child.kill('SIGKILL')
        await this.whenExited
      } else {
        leftMounts = mountsUnder(this.stateDir)
      }
    }
    if (leftMounts.length) throw new Error(`prism-e2b-local stopped but left mounted: ${leftMounts.join(', ')}`)
    await rm(this.stateDir, { recursive: true, force: true }).catch(() => undefined)
  }
}

/** Mount points (this mount namespace's) at or below `dir`. */
function mountsUnder(dir) {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point) => point && (point === dir || point.startsWith(`${dir}/`)))
}

/**
 * Starts prism-e2b-local on 127.0.0.1:0 with a fresh state dir and random
 * credentials; resolves once it printed both E2B_API_URL and E2B_SANDBOX_URL.
 */
export async function startServer({ after } = {}) {
  const bin = serverBinary()
  // `after`: a crashed server whose state dir and credentials this one takes over.
  const stateDir = after?.stateDir ?? (await mkdtemp(join(tmpdir(), 'prism-e2b-conformance-')))
  const apiKey = after?.apiKey ?? `e2b_${randomBytes(20).toString('hex')}`
  const adminToken = after?.adminToken ?? randomBytes(20).toString('hex')

  // The credentials go through the environment the server reads them from
  // (--api-key defaults to $E2B_API_KEY, --admin-token to
  // $PRISM_E2B_ADMIN_TOKEN), not argv, where every local user could read them.
  // PRISM_E2B_ENGINE (CTest's second run: gvisor) picks the isolation engine.
  const engine = process.env.PRISM_E2B_ENGINE ? ['--engine', process.env.PRISM_E2B_ENGINE] : []
  // PRISM_E2B_TLS_CERT/KEY (the TLS ctest entry): the server speaks TLS with ALPN h2, so the SDK uses HTTP/2.
  const tls = process.env.PRISM_E2B_TLS_CERT
    ? ['--tls-cert', process.env.PRISM_E2B_TLS_CERT, '--tls-key', process.env.PRISM_E2B_TLS_KEY]
    : []
  const child = spawn(bin, ['--listen', '127.0.0.1:0', '--state-dir', stateDir, ...engine, ...tls], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, E2B_API_KEY: apiKey, PRISM_E2B_ADMIN_TOKEN: adminToken },
  })
  liveChildren.add(child)

  const stderrTail = []
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk) => {
    for (const line of chunk.split('\n')) {
      if (line) stderrTail.push(line)
    }
    while (stderrTail.length > 40) stderrTail.shift()
  })

  const urls = await new Promise((resolve, reject) => {
    child.once('exit', () => rmSync(stateDir, { recursive: true, force: true }))
    const found = {}
    const lines = createInterface({ input: child.stdout })
    const fail = (why) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`prism-e2b-local did not start: ${why}; stderr tail:\n${stderrTail.join('\n')}`))
    }
    const timer = setTimeout(() => fail(`no URLs on stdout within ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS)
    child.once('error', (err) => fail(err.message))
    child.once('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`))
    lines.on('line', (line) => {
      const m = /^(E2B_API_URL|E2B_SANDBOX_URL)=(\S+)\s*$/.exec(line.trim())
      if (!m) return
      found[m[1]] = m[2]
      if (found.E2B_API_URL && found.E2B_SANDBOX_URL) {
        clearTimeout(timer)
        child.removeAllListeners('exit')
        child.removeAllListeners('error')
        // Keep draining stdout so the server never blocks on a full pipe.
        lines.on('line', () => {})
        resolve(found)
      }
    })
  })

  const server = new LocalServer(child, stateDir, apiKey, adminToken, urls.E2B_API_URL, urls.E2B_SANDBOX_URL)
  server.stderrTail = stderrTail
  return server
}

/** A unique token per test run, to tag sandboxes (metadata) and find them again. */
export function runId() {
  return `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
}

/**
 * Polls `probe` until it returns a truthy value or `timeoutMs` passes; returns
 * the value, or throws with `what` in the message.
 */
export async function waitFor(what, probe, { timeoutMs = 10_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    try {
      last = await probe()
      if (last) return last
    } catch (err) {
      last = err
    }
    if (Date.now() >= deadline) {
      const label = typeof what === 'function' ? what() : what
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${label} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`)
    }
    await sleep(intervalMs)
  }
}

/** Resolves or rejects like `promise`, or rejects after `ms` naming `what`. */
export async function within(ms, promise, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Collects a command's stdout as it streams (for onStdout) so tests can wait
 * for specific output.
 */
export class OutputCollector {
  constructor() {
    this.text = ''
    this.onData = (data) => {
      this.text += data
    }
  }

  lines() {
    return this.text.split('\n').filter(Boolean)
  }

  async waitForText(needle, timeoutMs = 10_000) {
    return waitFor(() => `output ${JSON.stringify(needle)} (have ${JSON.stringify(this.text.slice(-200))})`,
      () => this.text.includes(needle), { timeoutMs, intervalMs: 25 })
  }
}
