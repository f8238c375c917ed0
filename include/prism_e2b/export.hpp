// PRISM_E2B_API marks what libprism_e2b exports. The library is built with
// hidden visibility (-fvisibility=hidden), so only the public API annotated
// here is part of a shared libprism_e2b's ABI; internals stay private to it.
#ifndef PRISM_E2B_EXPORT_HPP
#define PRISM_E2B_EXPORT_HPP

/// Exported from the shared library (default ELF visibility); a no-op on
/// compilers without the attribute.
#if defined(__GNUC__) || defined(__clang__)
#define PRISM_E2B_API __attribute__((visibility("default")))
#else
#define PRISM_E2B_API
#endif

#endif
