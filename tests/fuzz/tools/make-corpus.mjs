#!/usr/bin/env node
// Turns exchanges recorded by record-local.mjs into the fuzz seed corpora:
//   node make-corpus.mjs <record dir> <corpus dir>
// Writes at most PER_TARGET files per target, named by their SHA-1 as libFuzzer
// does, choosing the first few exchanges of each route so every route is seeded.
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [recordDir, corpusDir] = process.argv.slice(2)
if (!recordDir || !corpusDir) {
  console.error('usage: make-corpus.mjs <record dir> <corpus dir>')
  process.exit(2)
}
const PER_TARGET = 48
const PER_ROUTE = 4
const MAX_SEED = 16 * 1024

const seeds = new Map() // target -> Map(route -> [Buffer])
function seed(target, route, bytes) {
  if (bytes.length > MAX_SEED) return
  if (!seeds.has(target)) seeds.set(target, new Map())
  const routes = seeds.get(target)
  if (!routes.has(route)) routes.set(route, [])
  const list = routes.get(route)
  if (list.length < PER_ROUTE && !list.some((b) => b.equals(bytes))) list.push(bytes)
}
const sel = (n, body) => Buffer.concat([Buffer.from([n]), body])

/** Splits a Connect stream into [flags, payload] envelopes. */
function envelopes(buf) {
  const out = []
  for (let i = 0; i + 5 <= buf.length; ) {
    const len = buf.readUInt32BE(i + 1)
    if (i + 5 + len > buf.length) break
    out.push([buf[i], buf.subarray(i + 5, i + 5 + len)])
    i += 5 + len
  }
  return out
}

const files = readdirSync(recordDir).filter((f) => f.endsWith('.json')).sort()
const pids = new Set()
for (const f of files) {
  const r = JSON.parse(readFileSync(join(recordDir, f), 'utf8'))
  const [line, ...headerLines] = r.request.split('\r\n').filter(Boolean)
  const [method, target] = line.split(' ')
  const url = new URL(target, 'http://x')
  const path = url.pathname
  const route = `${method} ${path.replace(/SANDBOXID/g, ':id')}`
  const headers = headerLines.map((h) => [h.slice(0, h.indexOf(':')).toLowerCase(), h.slice(h.indexOf(':') + 1).trim()])
  const header = (n) => headers.find(([k]) => k === n)?.[1]
  const reqBody = r.requestBody === null ? null : Buffer.from(r.requestBody, 'base64')
  const resBody = r.responseBody === null ? null : Buffer.from(r.responseBody, 'base64')
  const resType = (r.responseHeaders.find(([n]) => n.toLowerCase() === 'content-type') || [])[1] || ''

  // The raw request as the server reads it: the recorded head with the body
  // length made explicit (node has already undone any chunked encoding).
  if (reqBody !== null) {
    const kept = headerLines.filter((h) => !/^(content-length|transfer-encoding):/i.test(h))
    if (reqBody.length > 0 || method !== 'GET') kept.push(`content-length: ${reqBody.length}`)
    seed('http_request', route, Buffer.concat([Buffer.from(`${line}\r\n${kept.join('\r\n')}\r\n\r\n`, 'latin1'), reqBody]))
    const ctype = header('content-type') || ''
    if (ctype.startsWith('multipart/form-data')) seed('multipart', route, Buffer.concat([Buffer.from(`${ctype}\n`), reqBody]))
    if (ctype.startsWith('application/connect+')) seed('envelope', route, sel(1 + (reqBody.length % 7), reqBody))
    if (method === 'POST' && path === '/sandboxes') {
      try {
        const md = JSON.parse(reqBody.toString('utf8')).metadata || {}
        const lines = Object.entries(md).map(([k, v]) => `${k}\t${v}`).join('\n')
        if (lines) {
          seed('labels', route, Buffer.from(lines))
          seed('url_query', 'metadata', Buffer.from(lines))
        }
      } catch {}
    }
  }
  if (url.search) seed('url_query', route, Buffer.from(url.search.slice(1), 'latin1'))
  if (header('authorization')) seed('basic_auth', route, Buffer.from(header('authorization'), 'latin1'))
  if (resBody === null) continue

  // envd answers.
  if (resType.startsWith('application/connect+')) {
    seed('envelope', `${route} answer`, sel(5, resBody))
    for (const [flags, payload] of envelopes(resBody)) {
      seed('protojson', `${route} ${flags & 2 ? 'end' : 'event'}`, sel(flags & 2 ? 5 : 0, payload))
      try {
        const pid = JSON.parse(payload.toString('utf8'))?.event?.start?.pid
        if (pid) pids.add(pid)
      } catch {}
    }
  } else if (resType.startsWith('application/json') && r.status < 300) {
    const unary = {
      '/process.Process/List': 1,
      '/filesystem.Filesystem/Stat': 2,
      '/filesystem.Filesystem/MakeDir': 2,
      '/filesystem.Filesystem/Move': 2,
      '/filesystem.Filesystem/ListDir': 3,
      '/files': 4,
    }[path]
    if (unary !== undefined && method === 'POST') seed('protojson', route, sel(unary, resBody))
    if (method === 'POST' && (path === '/sandboxes' || /^\/sandboxes\/[^/]+\/connect$/.test(path)))
      seed('rest_json', route, sel(0, resBody))
    if (method === 'GET' && /^\/sandboxes\/[^/]+$/.test(path)) seed('rest_json', route, sel(1, resBody))
    if (method === 'GET' && path === '/v2/sandboxes') seed('rest_json', route, sel(2, resBody))
  }
}

// Process refs are the adapter's, not the SDK's: seed canonical refs for the
// pids the run really started (the fuzzer mutates them into everything else).
const b64url = (s) => Buffer.from(s).toString('base64url')
const fp = createHash('sha256').update('["/bin/bash","-l","-c","echo hello"]').digest('hex')
for (const pid of [...pids].slice(0, 12)) {
  const rec = JSON.stringify({ v: 1, sandbox: `i${pid}abcdefghijklmnopq`, pid, fp, ws: '/workspace' })
  seed('process_ref', `pid ${pid}`, Buffer.from(`prism-e2b-proc:${b64url(rec)}`))
}

for (const [target, routes] of seeds) {
  const dir = join(corpusDir, target)
  mkdirSync(dir, { recursive: true })
  // Round-robin over routes so the cap keeps every route.
  const lists = [...routes.values()]
  let written = 0
  for (let round = 0; written < PER_TARGET && lists.some((l) => l.length > round); ++round) {
    for (const l of lists) {
      if (round < l.length && written < PER_TARGET) {
        writeFileSync(join(dir, createHash('sha1').update(l[round]).digest('hex')), l[round])
        ++written
      }
    }
  }
  console.log(`${target}: ${written} seeds from ${routes.size} routes`)
}
