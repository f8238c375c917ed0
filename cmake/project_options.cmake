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
if(PRISM_E2B_SANITIZE)
  target_compile_options(prism_e2b_project_options INTERFACE
    -fsanitize=${PRISM_E2B_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(prism_e2b_project_options INTERFACE -fsanitize=${PRISM_E2B_SANITIZE})
endif()

# What compiling libprism_e2b's own translation units needs: hidden visibility,
# so only PRISM_E2B_API (<prism_e2b/export.hpp>) is exported from a shared build.
add_library(prism_e2b_library_options INTERFACE)
target_compile_options(prism_e2b_library_options INTERFACE -fvisibility=hidden -fvisibility-inlines-hidden)
