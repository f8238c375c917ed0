// Shared helpers of the JS side: configuration from the environment (the C++
// driver passes the same server and parameters it uses), timing, and the
// process-level cost figures the C++ side reports too.
import { readFileSync } from 'node:fs'
import { Sandbox } from 'e2b'

export const config = {
  apiKey: process.env.E2B_API_KEY,
  apiUrl: process.env.E2B_API_URL,
  sandboxUrl: process.env.E2B_SANDBOX_URL,
  n: Number(process.env.BENCH_N ?? 50),
  sandboxes: Number(process.env.BENCH_SANDBOXES ?? 50),
  execs: Number(process.env.BENCH_EXECS ?? 1000),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 8),
  memoryMib: Number(process.env.BENCH_MEMORY_MIB ?? 64),
  quiet: process.env.BENCH_QUIET === '1',
}

if (!config.apiKey || !config.apiUrl) {
  console.error('E2B_API_KEY and E2B_API_URL must be set')
  process.exit(2)
}

/** Connection options of every SDK call. */
export const conn = {
  apiKey: config.apiKey,
  apiUrl: config.apiUrl,
  sandboxUrl: config.sandboxUrl,
  requestTimeoutMs: 120_000,
}

export function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6
}

/** Runs fn and returns its duration in ms. */
export async function timed(fn) {
  const t0 = nowMs()
  await fn()
  return nowMs() - t0
}

/** A progress line on stderr (the C++ driver lets stderr through). */
export function progress(label, total) {
  let done = 0
  let last = 0
  const tty = process.stderr.isTTY && !config.quiet
  return {
    tick() {
      done++
      const t = Date.now()
      if (tty && (t - last > 100 || done === total)) {
        last = t
        process.stderr.write(`\r[js] ${label.padEnd(20)} ${done}/${total}`)
        if (done === total) process.stderr.write('\n')
      }
    },
  }
}

/** CPU seconds of the server process (BENCH_SERVER_PID) and its reaped children; 0 when unknown. */
export function serverCpuSeconds() {
  const pid = process.env.BENCH_SERVER_PID
  if (!pid) return 0
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // rest[0] is field 3 (state): utime 14, stime 15, cutime 16, cstime 17
    // (reaped children count as server work); ticks are 100/s on Linux.
    return (Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) / 100
  } catch {
    return 0
  }
}

export function cpuSeconds(start) {
  const u = process.cpuUsage(start)
  return (u.user + u.system) / 1e6
}

/** Peak RSS of this node process in KiB (process.resourceUsage().maxRSS is KiB). */
export function peakRssKib() {
  return process.resourceUsage().maxRSS
}

export async function createSandbox(opts = {}) {
  return Sandbox.create('base', { ...conn, timeoutMs: 600_000, ...opts })
}

export function emit(result) {
  process.stdout.write(JSON.stringify(result) + '\n')
}
