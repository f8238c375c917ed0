// Requests and options the adapter tests pass to a sandbox, built outside
// coroutines: g++ 12 mis-compiles designated initializers with string literals
// inside coroutine bodies, and mis-destroys braced temporaries inside a
// co_await full-expression, so tests name these instead.
#ifndef PRISM_E2B_TESTS_COMMON_ADAPTER_REQUESTS_HPP
#define PRISM_E2B_TESTS_COMMON_ADAPTER_REQUESTS_HPP

#include <prism_e2b/process.hpp>
#include <prism_e2b/sandbox.hpp>

#include <string>
#include <utility>

namespace prism_e2b::test {

/// `command` run by the sandbox's shell.
inline exec_request shell(std::string command)
{
    exec_request r;
    r.command = std::move(command);
    return r;
}

/// A long-running process of `file` with `args` (variadic: a braced list argument trips
/// the same bug).
template <class... A>
process_request proc(std::string file, A... args)
{
    process_request r;
    r.file = std::move(file);
    (r.args.emplace_back(args), ...);
    return r;
}

inline pause_options const keep_memory{.keep_memory = true};
inline pause_options const filesystem_only{.keep_memory = false};

}  // namespace prism_e2b::test

#endif
