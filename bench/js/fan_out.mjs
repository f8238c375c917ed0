// Exec fan-out with the official SDK: BENCH_EXECS short commands (/bin/true)
// across BENCH_SANDBOXES sandboxes, BENCH_CONCURRENCY workers per sandbox (the
// C++ side's max_concurrent_execs). Same scenario as `prism-e2b bench fan_out`.
import { cpuSeconds, serverCpuSeconds, config, createSandbox, emit, nowMs, peakRssKib, progress, timed } from './common.mjs'

const create = []
const sandboxes = []
const cbar = progress('create', config.sandboxes)
await Promise.all(
  Array.from({ length: config.sandboxes }, async () => {
    let s
    create.push(await timed(async () => { s = await createSandbox() }))
    sandboxes.push(s)
    cbar.tick()
  }),
)

const exec = []
let failures = 0
const bar = progress('exec', config.execs)
const perSandbox = sandboxes.map((_, i) =>
  Math.floor(config.execs / sandboxes.length) + (i < config.execs % sandboxes.length ? 1 : 0))
const cpu0 = process.cpuUsage()
const server0 = serverCpuSeconds()
const t0 = nowMs()
await Promise.all(
  sandboxes.flatMap((s, i) => {
    let left = perSandbox[i]
    return Array.from({ length: config.concurrency }, async () => {
      while (left > 0) {
        left--
        const t = nowMs()
        const r = await s.commands.run('/bin/true', { timeoutMs: 60_000 })
        exec.push(nowMs() - t)
        if (r.exitCode !== 0) failures++
        bar.tick()
      }
    })
  }),
)
const wall = (nowMs() - t0) / 1000
const cpu = cpuSeconds(cpu0)
const serverCpu = serverCpuSeconds() - server0
await Promise.all(sandboxes.map((s) => s.kill()))
emit({
  operations: { exec, create },
  metrics: {
    execs: exec.length,
    failures,
    wall_seconds: wall,
    throughput_per_s: exec.length / wall,
    cpu_seconds: cpu,
    cpu_seconds_per_1000: (cpu / exec.length) * 1000,
    peak_rss_kib: peakRssKib(),
    server_cpu_cores_busy: serverCpu / wall,
  },
  notes: ['commands.run("/bin/true") starts /bin/bash -l -c /bin/true on the server (the SDK always uses a login shell)'],
})
