# Warnings and sanitizers for the project's own targets only; never part of
# the installed interface (linked PRIVATE everywhere).
add_library(prism_e2b_project_options INTERFACE)
target_compile_options(prism_e2b_project_options INTERFACE
  -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(PRISM_E2B_SANITIZE)
  target_compile_options(prism_e2b_project_options INTERFACE
    -fsanitize=${PRISM_E2B_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(prism_e2b_project_options INTERFACE -fsanitize=${PRISM_E2B_SANITIZE})
endif()
