// The SDK version matrix is what it says: `e2b` resolves to the package that
// PRISM_E2B_SDK_PACKAGE names (sdk_select.mjs), whose version is the pinned one.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const pins = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).dependencies

test('the SDK under test is the pinned one the matrix names', () => {
  const pkg = process.env.PRISM_E2B_SDK_PACKAGE ?? 'e2b'
  const resolved = fileURLToPath(import.meta.resolve('e2b'))
  assert.ok(resolved.includes(`/node_modules/${pkg}/`), `e2b resolves to ${resolved}, not ${pkg}`)
  const installed = JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8'))
  const pin = pins[pkg].replace(/^npm:e2b@/, '')
  assert.equal(installed.version, pin)
})
