// pause/resume latency with the official SDK: N cycles of pause(keepMemory
// true)/connect and pause(keepMemory false)/connect on a sandbox running a
// process that holds BENCH_MEMORY_MIB of memory (re-started after each
// filesystem pause, untimed). Same scenario as `prism-e2b bench pause_resume`.
import { Sandbox } from 'e2b'
import { config, conn, cpuSeconds, createSandbox, emit, peakRssKib, progress, timed } from './common.mjs'

const holder = `perl -e '$x = "a" x (${config.memoryMib} * 1048576); $| = 1; print "ready\\n"; sleep 100000'`

const cpu0 = process.cpuUsage()
const ops = { pause_memory: [], resume_memory: [], pause_filesystem: [], resume_filesystem: [] }
const sbx = await createSandbox()
try {
  const bar = progress('pause/resume', config.n)
  for (let i = 0; i < config.n; i++) {
    // Pause only once the process holds its memory (it prints "ready").
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the memory holder did not report ready')), 30_000)
      sbx.commands
        .run(holder, {
          background: true,
          timeoutMs: 0,
          onStdout: (d) => {
            if (d.includes('ready')) {
              clearTimeout(timer)
              resolve()
            }
          },
        })
        .catch(reject)
    })
    ops.pause_memory.push(await timed(() => sbx.pause({ keepMemory: true })))
    ops.resume_memory.push(await timed(() => Sandbox.connect(sbx.sandboxId, { ...conn, timeoutMs: 600_000 })))
    ops.pause_filesystem.push(await timed(() => sbx.pause({ keepMemory: false })))
    ops.resume_filesystem.push(await timed(() => Sandbox.connect(sbx.sandboxId, { ...conn, timeoutMs: 600_000 })))
    bar.tick()
  }
} finally {
  await sbx.kill()
}
emit({
  operations: ops,
  metrics: { cycles: config.n, cpu_seconds: cpuSeconds(cpu0), peak_rss_kib: peakRssKib() },
  notes: ['resume is Sandbox.connect (the SDK resumes through connect)'],
})
