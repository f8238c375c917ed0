// The unary envd call of `prism-e2b bench unary_floor` (filesystem Stat) through
// Calls: BENCH_N * 40 after 20 warm-up calls, as on the C++ side.
// the official SDK (files.getInfo), sequentially, for comparison.
import { config, cpuSeconds, createSandbox, emit, peakRssKib, progress, timed } from './common.mjs'

const sbx = await createSandbox()
const stat = []
try {
  for (let i = 0; i < 20; i++) await sbx.files.getInfo('/home/user')
  const bar = progress("stat", config.n * 40)
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < config.n * 40; i++) {
    stat.push(await timed(() => sbx.files.getInfo('/home/user')))
    bar.tick()
  }
  var cpu = cpuSeconds(cpu0)
} finally {
  await sbx.kill()
}
emit({ operations: { stat }, metrics: { calls: stat.length, cpu_seconds: cpu, peak_rss_kib: peakRssKib() } })
