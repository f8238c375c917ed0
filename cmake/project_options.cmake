# Warnings and sanitizers for the project's own targets only; never part of
# the installed interface (linked PRIVATE everywhere).
add_library(prism_e2b_project_options INTERFACE)
target_compile_options(prism_e2b_project_options INTERFACE
  -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(PRISM_E2B_WERROR)
  target_compile_options(prism_e2b_project_options INTERFACE -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ reports -Wmismatched-new-delete on every coroutine returning an Asio
  # awaitable: after inlining it pairs awaitable_frame_base's class operator new
  # with its sized operator delete (boost/asio/impl/awaitable.hpp), which is a
  # matching pair. It is GCC PR middle-end/109224, a false positive here; clang
  # has no such warning. Silenced for g++ only, this one warning only.
  target_compile_options(prism_e2b_project_options INTERFACE -Wno-mismatched-new-delete)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND PRISM_E2B_SANITIZE MATCHES "thread")
  # g++ warns (-Wtsan) that ThreadSanitizer does not model atomic_thread_fence,
  # which Asio's executor reference count and libstdc++ use. Nothing to fix in
  # our code; the runtime side is tests/common/tsan_suppressions.hpp.
  target_compile_options(prism_e2b_project_options INTERFACE -Wno-tsan)
endif()
if(PRISM_E2B_SANITIZE)
  target_compile_options(prism_e2b_project_options INTERFACE
    -fsanitize=${PRISM_E2B_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(prism_e2b_project_options INTERFACE -fsanitize=${PRISM_E2B_SANITIZE})
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND PRISM_E2B_SANITIZE MATCHES "undefined")
  # clang 14 cannot emit -fsanitize=function's prologue data for coroutine frames ("Cannot
  # represent a difference across sections"); the rest of UBSan stays on.
  target_compile_options(prism_e2b_project_options INTERFACE -fno-sanitize=function)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND PRISM_E2B_SANITIZE MATCHES "address" AND PRISM_E2B_SANITIZE MATCHES "undefined")
  # g++ 12 gives the static data of every UBSan check site an ASan redzone and registers it as a
  # global: four fifths of each object's data (h2_connection.cpp: 3.2 MB, 0.7 MB without), 187 MB
  # of .data in the CLI, and every process start (the CLI, the server, each sandbox's envd)
  # registering, poisoning and leak-scanning it: over a second per start under load. Global
  # overflows are checked in CI's ASan build, which is clang's (clang does not do this).
  target_compile_options(prism_e2b_project_options INTERFACE --param=asan-globals=0)
endif()

# What compiling libprism_e2b's own translation units needs: hidden visibility,
# so only PRISM_E2B_API (<prism_e2b/export.hpp>) is exported from a shared build.
add_library(prism_e2b_library_options INTERFACE)
target_compile_options(prism_e2b_library_options INTERFACE -fvisibility=hidden -fvisibility-inlines-hidden)

# lld links this build's own programs (the sanitized test executables above all)
# about six times faster than ld.bfd: the ASan CLI in 5.4 s, not 32.7 s
# (2026-12-02). Never part of the installed interface; used when installed
# (scripts/bootstrap.sh installs it).
option(PRISM_E2B_USE_LLD "Link this build's own targets with lld when it is installed" ON)
if(PRISM_E2B_USE_LLD)
  find_program(PRISM_E2B_LLD NAMES ld.lld)
  if(PRISM_E2B_LLD)
    target_link_options(prism_e2b_project_options INTERFACE -fuse-ld=lld)
  endif()
endif()
