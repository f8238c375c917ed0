// A resolve hook (registered by sdk_select.mjs): `import ... from 'e2b'` loads the
// package named by PRISM_E2B_SDK_PACKAGE (e.g. e2b-latest, the newest pinned SDK).
export async function resolve(specifier, context, next) {
  const alias = process.env.PRISM_E2B_SDK_PACKAGE
  if (alias && specifier === 'e2b') return next(alias, context)
  return next(specifier, context)
}
