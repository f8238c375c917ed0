// Process recovery: start a long-running process, keep only its ref, "restart
// the host side" (drop every object: sandbox, client, io_context), then build
// everything again and recover the process by ref through the attested
// recovery backend. A backend with a wrong expectation recovers nothing.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_recovery.hpp>

#include "common/example_main.hpp"

#include <cstdio>
#include <mutex>

namespace asio = boost::asio;
using namespace prism_e2b;

/// What the host persists across its restart: identities, never secrets.
struct host_record {
    std::string sandbox_id;
    std::string process_ref;
};

label_map const labels{{"app.owner", "alice"}, {"app.job", "recovery-example"}};

// -- host, first life --------------------------------------------------------
asio::awaitable<int> first_life(example::environment env, host_record& record)
{
    auto ex = co_await asio::this_coro::executor;
    auto o = env.sandbox_options();
    o.labels = labels;
    auto created = co_await async_create_e2b_sandbox(ex, std::move(o));
    if (!created) co_return example::fail("create: " + created.error().to_string());
    auto sandbox = *created;
    process_request req;
    req.file = "/bin/sh";
    req.args = {"-c", "while true; do echo beat; sleep 0.2; done"};
    req.stdin_open = false;
    auto proc = co_await sandbox->async_start_process(std::move(req));
    if (!proc) co_return example::fail("start_process: " + proc.error().to_string());
    record = {sandbox->id(), (*proc)->ref()};
    std::printf("first life: sandbox %s, process pid %u\n  ref %s\n", record.sandbox_id.c_str(), (*proc)->pid(),
                record.process_ref.c_str());
    // Detach: the process keeps running in the sandbox.
    if (auto r = co_await (*proc)->async_release(); !r) co_return example::fail("release: " + r.error().to_string());
    co_return 0;
}  // every object of the first life is destroyed here

// -- host, second life ---------------------------------------------------------
asio::awaitable<int> second_life(example::environment env, host_record record)
{
    auto ex = co_await asio::this_coro::executor;
    auto o = env.connect_options(record.sandbox_id);
    o.expected_labels = labels;
    auto connected = co_await async_connect_e2b_sandbox(ex, std::move(o));
    if (!connected) co_return example::fail("connect: " + connected.error().to_string());
    auto sandbox = *connected;
    int rc = 0;

    // A backend that expects another workspace must not recover anything.
    auto wrong = create_e2b_process_recovery_backend(sandbox, {record.sandbox_id, "/elsewhere", labels});
    output_callback ignore;
    auto refused = co_await wrong->async_attach(record.process_ref, std::move(ignore));
    if (refused && *refused)
        rc = example::fail("a backend with the wrong workspace recovered the process");
    else
        std::printf("second life: wrong expectations -> nothing recovered (as it must be)\n");

    auto backend = create_e2b_process_recovery_backend(sandbox, {record.sandbox_id, "/workspace", labels});
    auto output = std::make_shared<std::pair<std::mutex, std::string>>();
    // A named callback: GCC 12 mishandles non-trivial temporaries inside co_await expressions.
    output_callback collect = [output](output_stream, std::string_view d) {
        std::lock_guard lock(output->first);
        output->second.append(d);
    };
    auto recovered = co_await backend->async_attach(record.process_ref, std::move(collect));
    auto handle = recovered ? std::move(*recovered) : nullptr;  // null: cannot be attested
    if (!handle) {
        rc = example::fail("the recovery backend returned null for a live process");
    } else {
        // Still running: a bounded wait times out, and fresh output arrives.
        auto w = co_await handle->async_wait(std::chrono::milliseconds(700));
        bool const alive = !w && w.error() == errc::timed_out;
        std::size_t got = 0;
        {
            std::lock_guard lock(output->first);
            got = output->second.size();
        }
        std::printf("second life: recovered pid %u, %s, %zu bytes of new output\n", handle->pid(),
                    alive ? "still running" : "NOT running", got);
        if (!alive || got == 0) rc = example::fail("the recovered process is not alive");
        if (auto k = co_await handle->async_kill(); !k) rc = example::fail("kill process: " + k.error().to_string());
        auto end = co_await handle->async_wait(std::chrono::milliseconds(5000));
        if (!end || end->outcome != exit_outcome::killed || end->exit_code)
            rc = example::fail("the killed process did not end as killed");
        else
            std::printf("second life: process killed (%s)\n", end->status.c_str());
    }
    if (auto k = co_await sandbox->async_kill(); !k) rc = example::fail("kill sandbox: " + k.error().to_string());
    co_return rc;
}

int main()
{
    host_record record;
    return example::main([&record](example::environment env) -> asio::awaitable<int> {
        // Each life gets its own io_context: nothing survives but `record`.
        int rc = example::run_on_io_context([&record](example::environment e) { return first_life(e, record); }, env);
        if (rc == 0)
            rc = example::run_on_io_context([&record](example::environment e) { return second_life(e, record); }, env);
        co_return rc;
    });
}
