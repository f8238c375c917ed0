// hello.cpp: a sandbox, one command, gone. With E2B_API_KEY set it runs on E2B
// (E2B_DOMAIN / E2B_API_URL honoured as by the official SDKs); without, on
// prism-e2b-local embedded in this process (real processes on this machine).
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/local_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <random>
#include <string>

namespace asio = boost::asio;
using namespace prism_e2b;

asio::awaitable<int> hello(e2b_sandbox_options opts)
{
    auto ex = co_await asio::this_coro::executor;
    auto sandbox = co_await async_create_e2b_sandbox(ex, std::move(opts));  // result<shared_ptr<e2b_sandbox>>
    if (!sandbox) {
        std::fprintf(stderr, "create: %s\n", sandbox.error().to_string().c_str());  // errors are values
        co_return 1;
    }
    auto ran = co_await (*sandbox)->async_exec(exec_request::shell("echo hello from $(uname -s)"));
    co_await (*sandbox)->async_kill();
    if (!ran) {
        std::fprintf(stderr, "exec: %s\n", ran.error().to_string().c_str());
        co_return 1;
    }
    std::printf("%s", ran->stdout_data.c_str());  // "hello from Linux"
    co_return ran->exit_code.value_or(1);         // no exit code: killed
}

int main()
{
    asio::io_context ioc;
    e2b_sandbox_options opts;
    std::optional<local::server> embedded;
    if (char const* key = std::getenv("E2B_API_KEY"); key && *key) {
        opts.api_key = key;
    } else {
        local::server_options so;
        std::random_device rd;  // 64 bits: the port is loopback only, but other local users could try keys
        so.api_key = "local-" + std::to_string(rd()) + std::to_string(rd());
        opts.api_key = so.api_key;
        embedded.emplace(ioc.get_executor(), so);
        if (auto started = embedded->start(); !started) {
            std::fprintf(stderr, "local server: %s\n", started.error().to_string().c_str());
            return 1;
        }
        opts.client_options.api_url = embedded->api_url();
        opts.client_options.sandbox_url = embedded->sandbox_url();
    }
    int exit_code = 1;
    asio::co_spawn(ioc, hello(std::move(opts)), [&](std::exception_ptr e, int rc) {
        exit_code = e ? 1 : rc;
        if (embedded) embedded->stop();  // closes the listener: run() returns once the rest is done
    });
    ioc.run();
    return exit_code;
}
