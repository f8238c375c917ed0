// Which inline request forms g++ 12 miscompiles inside a co_await
// full-expression (GCC bug 98401). Standalone: no Asio, no library. Each FORM
// is one call shape; run every one with both compilers:
//
//   for f in $(seq 1 20); do for cc in g++ clang++; do
//     $cc -std=c++20 -g -fsanitize=address,undefined -DFORM=$f gcc_pr98401.cpp -o r && ./r
//   done; done
//
// g++ 12.2 (Debian 12.2.0-14): forms 1, 2, 3, 7, 8, 13 and 19 abort under ASan
// (double free / free of a non-malloc'ed address: an aggregate temporary with
// non-trivial members, or a defaulted aggregate parameter, destroyed twice);
// 5, 9 and 12 do not compile ("array used as initializer": a braced list of
// strings); 4, 10, 11, 14, 15, 16, 18 and 20 are correct. 6 and 17 are
// ill-formed everywhere (designated initializers need an aggregate).
// clang 14: every well-formed form is correct.
#include <coroutine>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct task {
    struct promise_type {
        task get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct final_awaiter {
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept
            {
                auto c = h.promise().cont;
                return c ? c : std::noop_coroutine();
            }
            void await_resume() noexcept {}
        };
        final_awaiter final_suspend() noexcept { return {}; }
        void return_value(int v) { value = v; }
        void unhandled_exception() { std::terminate(); }
        int value = 0;
        std::coroutine_handle<> cont;
    };
    std::coroutine_handle<promise_type> h;
    task(std::coroutine_handle<promise_type> x) : h(x) {}
    task(task&& o) noexcept : h(std::exchange(o.h, {})) {}
    ~task()
    {
        if (h) h.destroy();
    }
    bool await_ready() { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> c)
    {
        h.promise().cont = c;
        return h;
    }
    int await_resume() { return h.promise().value; }
};

// A: an aggregate with std::string members (exec_request's shape).
struct agg_req {
    std::string command;
    std::optional<std::string> cwd;
    std::vector<std::string> args;
    int timeout = 0;
};
// B: the same data with a user-provided constructor (not an aggregate).
struct ctor_req {
    std::string command;
    std::optional<std::string> cwd;
    std::vector<std::string> args;
    ctor_req(std::string c, std::vector<std::string> a = {}) : command(std::move(c)), args(std::move(a)) {}
};
// C: a non-aggregate built from a designated "params" aggregate.
struct req_params {
    std::string command;
    std::optional<std::string> cwd;
};
struct wrapped_req {
    std::string command;
    std::optional<std::string> cwd;
    wrapped_req(req_params p) : command(std::move(p.command)), cwd(std::move(p.cwd)) {}
};

task op_agg(agg_req r) { co_return static_cast<int>(r.command.size() + r.args.size()); }
task op_ctor(ctor_req r) { co_return static_cast<int>(r.command.size() + r.args.size()); }
task op_wrapped(wrapped_req r) { co_return static_cast<int>(r.command.size()); }
task op_string(std::string command, agg_req opts = {})
{
    co_return static_cast<int>(command.size() + opts.args.size());
}
task op_vector(std::vector<std::string> args) { co_return static_cast<int>(args.size()); }

// Non-coroutine entry points, as the library's async_x initiations are.
task plain_agg(agg_req r) { return op_agg(std::move(r)); }
task plain_string(std::string c) { return op_string(std::move(c)); }
task plain_view(std::string_view c) { return op_string(std::string(c)); }
task plain_with_default(std::string c, agg_req opts = {}) { return op_string(std::move(c), std::move(opts)); }
task plain_ctor(ctor_req r) { return op_ctor(std::move(r)); }
// D: a constructor from a designated params aggregate with only trivially destructible members
struct view_params {
    std::string_view command;
    int timeout = 0;
};
struct from_view_req {
    std::string command;
    int timeout = 0;
    from_view_req(view_params p) : command(p.command), timeout(p.timeout) {}
};
task plain_from_view(from_view_req r) { co_return static_cast<int>(r.command.size()); }

#ifndef FORM
#define FORM 1
#endif

task body()
{
    int n = 0;
#if FORM == 1  // designated aggregate, string member from a literal
    n += co_await op_agg({.command = "echo a long enough string to leave SSO"});
#elif FORM == 2   // braced aggregate, positional
    n += co_await op_agg({"echo a long enough string to leave SSO"});
#elif FORM == 3   // explicit type, designated
    n += co_await op_agg(agg_req{.command = "echo a long enough string to leave SSO"});
#elif FORM == 4   // braced list into a class with a constructor
    n += co_await op_ctor({"echo a long enough string to leave SSO"});
#elif FORM == 5   // constructor with a braced vector argument
    n += co_await op_ctor(ctor_req("echo a long enough string to leave SSO", {"a", "b"}));
#elif FORM == 6   // non-aggregate from a designated params aggregate
    n += co_await op_wrapped({.command = "echo a long enough string to leave SSO"});
#elif FORM == 7   // plain std::string argument from a literal
    n += co_await op_string("echo a long enough string to leave SSO");
#elif FORM == 8   // std::string argument plus designated options aggregate
    n += co_await op_string("echo a long enough string to leave SSO", {.timeout = 5});
#elif FORM == 9   // braced vector<string>
    n += co_await op_vector({"a long enough string to leave SSO one", "two"});
#elif FORM == 10  // named variable (the documented workaround)
    agg_req r{.command = "echo a long enough string to leave SSO"};
    n += co_await op_agg(std::move(r));
#elif FORM == 11  // ctor_req from a std::string temporary, no braces
    n += co_await op_ctor(ctor_req(std::string("echo a long enough string to leave SSO")));
#elif FORM == 12  // designated aggregate with a vector member
    n += co_await op_agg({.command = "echo a long enough string to leave SSO", .args = {"x", "y"}});
#elif FORM == 13
    n += co_await plain_agg({.command = "echo a long enough string to leave SSO"});
#elif FORM == 14
    n += co_await plain_string("echo a long enough string to leave SSO");
#elif FORM == 15
    n += co_await plain_view("echo a long enough string to leave SSO");
#elif FORM == 16
    n += co_await plain_ctor({"echo a long enough string to leave SSO"});
#elif FORM == 17
    n += co_await plain_from_view({.command = "echo a long enough string to leave SSO", .timeout = 3});
#elif FORM == 18  // a braced temporary of a class with a constructor, then co_await on a named awaitable
    task t = plain_agg({.command = "echo a long enough string to leave SSO"});
    n += co_await std::move(t);
#elif FORM == 19  // a plain function with a defaulted aggregate parameter
    n += co_await plain_with_default("echo a long enough string to leave SSO");
#elif FORM == 20
    n += co_await plain_string(std::string("echo a long enough string to leave SSO"));
#endif
    co_return n;
}

int main()
{
    task t = body();
    t.h.resume();
    std::printf("form %d: %d\n", FORM, t.h.promise().value);
}
