// Quickstart: the seed's implementation example in C++.
// Create a labelled sandbox, run one command, snapshot the filesystem
// (pause without memory), reconnect as the owner, resume, and kill.
#include <prism_e2b/e2b_sandbox.hpp>

#include "common/example_main.hpp"

#include <cstdio>

namespace asio = boost::asio;
using namespace prism_e2b;

asio::awaitable<int> co_main(example::environment env)
{
    auto ex = co_await asio::this_coro::executor;

    auto opts = env.sandbox_options();
    opts.labels = {{"app.owner", "alice"}};
    opts.timeout = std::chrono::minutes(10);
    auto created = co_await async_create_e2b_sandbox(ex, std::move(opts));
    if (!created) co_return example::fail("create: " + created.error().to_string());
    auto sandbox = *created;
    std::printf("created %s\n", sandbox->id().c_str());

    exec_file_request echo;
    echo.file = "/bin/echo";
    echo.args = {"ok"};
    echo.cwd = "/workspace";
    auto ran = co_await sandbox->async_exec_file(std::move(echo));
    if (!ran || ran->exit_code != 0 || ran->stdout_data != "ok\n")
        co_return example::fail("exec_file: " +
                                (ran ? "unexpected output '" + ran->stdout_data + "'" : ran.error().to_string()));
    std::printf("echo said: %s", ran->stdout_data.c_str());

    pause_options filesystem_only;
    filesystem_only.keep_memory = false;
    auto paused = co_await sandbox->pause_control()->async_pause(filesystem_only);
    if (!paused || !paused->is_paused())
        co_return example::fail("pause: " + (paused ? std::string("refused") : paused.error().to_string()));
    std::printf("paused (filesystem snapshot)\n");

    auto copts = env.connect_options(sandbox->id());
    copts.expected_labels = {{"app.owner", "alice"}};
    auto again = co_await async_connect_e2b_sandbox(ex, std::move(copts));
    if (!again) co_return example::fail("connect: " + again.error().to_string());
    if (auto r = co_await (*again)->pause_control()->async_resume(); !r)
        co_return example::fail("resume: " + r.error().to_string());
    std::printf("reconnected as the owner and resumed\n");

    if (auto r = co_await (*again)->async_kill(); !r) co_return example::fail("kill: " + r.error().to_string());
    std::printf("killed\n");
    co_return 0;
}

int main() { return example::main(co_main); }
