#!/usr/bin/env node
// Records real traffic between a client (the official JS SDK in the
// conformance run) and prism-e2b-local, for the fuzz seed corpora.
//
// Stands in for the server binary: the conformance harness starts it as
// PRISM_E2B_LOCAL, it starts the real server (PRISM_E2B_RECORD_SERVER) with the
// same arguments and environment, puts an HTTP/1.1 recording proxy on an
// ephemeral loopback port in front of it, and prints the proxy's URLs the way
// the server prints its own. Each exchange becomes one JSON file in
// PRISM_E2B_RECORD_DIR (request head and body, response status, headers and
// body, bodies base64, cut at 256 KiB).
//
// Secrets never reach the files: the API key and admin token are replaced by
// the fuzz fixture's "fuzz-api-key" and "fuzz-admin-token", every sandbox id by
// SANDBOXID and every envd access token by ACCESSTOKEN (tests/fuzz/README.md).
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const MAX_BODY = 256 * 1024
const server = process.env.PRISM_E2B_RECORD_SERVER
const outDir = process.env.PRISM_E2B_RECORD_DIR
if (!server || !outDir) {
  console.error('record-local: set PRISM_E2B_RECORD_SERVER (the real prism-e2b-local) and PRISM_E2B_RECORD_DIR')
  process.exit(2)
}
mkdirSync(outDir, { recursive: true })

// Secret -> placeholder; sandbox ids and tokens are learned from the answers.
const replacements = new Map()
const addSecret = (secret, placeholder) => {
  if (secret && secret.length >= 4) replacements.set(secret, placeholder)
}
addSecret(process.env.E2B_API_KEY, 'fuzz-api-key')
addSecret(process.env.PRISM_E2B_ADMIN_TOKEN, 'fuzz-admin-token')

function scrub(buf) {
  let text = buf.toString('latin1')
  const secrets = [...replacements.keys()].sort((a, b) => b.length - a.length)
  for (const s of secrets) text = text.split(s).join(replacements.get(s))
  return Buffer.from(text, 'latin1')
}

function learn(body) {
  // Sandbox, SandboxDetail and ListedSandbox answers name ids and tokens.
  let v
  try {
    v = JSON.parse(body.toString('utf8'))
  } catch {
    return
  }
  for (const s of Array.isArray(v) ? v : [v]) {
    if (s && typeof s === 'object') {
      if (typeof s.sandboxID === 'string') addSecret(s.sandboxID, 'SANDBOXID')
      if (typeof s.envdAccessToken === 'string') addSecret(s.envdAccessToken, 'ACCESSTOKEN')
    }
  }
}

const child = spawn(server, process.argv.slice(2), { stdio: ['ignore', 'pipe', 'inherit'] })
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => child.kill(sig))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))

let upstream
let seq = 0
const proxy = http.createServer((req, res) => {
  const reqChunks = []
  req.on('data', (c) => reqChunks.push(c))
  req.on('end', () => {
    const reqBody = Buffer.concat(reqChunks)
    const up = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode, upRes.rawHeaders)
        res.flushHeaders()
        const resChunks = []
        upRes.on('data', (c) => {
          resChunks.push(c)
          res.write(c)
        })
        upRes.on('end', () => {
          res.end()
          save(req, reqBody, upRes, Buffer.concat(resChunks), false)
        })
        upRes.on('error', () => {
          res.destroy()
          save(req, reqBody, upRes, Buffer.concat(resChunks), true)
        })
      }
    )
    up.on('error', () => res.destroy())
    res.on('close', () => up.destroy())
    up.end(reqBody)
  })
})

function save(req, reqBody, upRes, resBody, cut) {
  learn(resBody)
  const head = `${req.method} ${req.url} HTTP/1.1\r\n` + pairs(req.rawHeaders).map(([n, v]) => `${n}: ${v}\r\n`).join('')
  const record = {
    request: scrub(Buffer.from(head, 'latin1')).toString('latin1'),
    requestBody: reqBody.length <= MAX_BODY ? scrub(reqBody).toString('base64') : null,
    status: upRes.statusCode,
    responseHeaders: pairs(upRes.rawHeaders).map(([n, v]) => [n, scrub(Buffer.from(v, 'latin1')).toString('latin1')]),
    responseBody: resBody.length <= MAX_BODY ? scrub(resBody).toString('base64') : null,
    cut,
  }
  writeFileSync(join(outDir, `${process.pid}-${String(++seq).padStart(5, '0')}.json`), JSON.stringify(record))
}

function pairs(raw) {
  const out = []
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i], raw[i + 1]])
  return out
}

const found = {}
createInterface({ input: child.stdout }).on('line', (line) => {
  const m = /^(E2B_API_URL|E2B_SANDBOX_URL)=(\S+)\s*$/.exec(line.trim())
  if (!m) return
  found[m[1]] = new URL(m[2])
  if (!found.E2B_API_URL || !found.E2B_SANDBOX_URL || upstream) return
  upstream = found.E2B_API_URL
  proxy.listen(0, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${proxy.address().port}`
    process.stdout.write(`E2B_API_URL=${url}\nE2B_SANDBOX_URL=${url}\n`)
  })
})
