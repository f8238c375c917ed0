// The SDK version matrix: `node --import ./sdk_select.mjs --test ...` with
// PRISM_E2B_SDK_PACKAGE=e2b-latest runs every scenario written against `e2b`
// (2.49.1) with the newest pinned SDK instead. A new SDK release is one more
// npm alias in package.json and one more ctest (CMakeLists.txt).
import { register } from 'node:module'

if (process.env.PRISM_E2B_SDK_PACKAGE) register('./sdk_hook.mjs', import.meta.url)
