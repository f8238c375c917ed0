// Whether this test binary runs under AddressSanitizer or ThreadSanitizer: g++
// defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang 14 only answers
// __has_feature. Memory figures (shadow memory, ASan's quarantine) and
// throughput are not comparable there.
#ifndef PRISM_E2B_TESTS_COMMON_SANITIZERS_HPP
#define PRISM_E2B_TESTS_COMMON_SANITIZERS_HPP

namespace prism_e2b::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif
#else
inline constexpr bool under_sanitizer = false;
#endif

}  // namespace prism_e2b::test

#endif
