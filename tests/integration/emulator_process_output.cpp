// prism-e2b-local's process runner keeps every byte a process wrote, also when the
// process exits while a background child holds its pipes open and the grace after
// the exit is zero: what is buffered, and what a read already performed, comes
// before the end event (a CI run once saw exit 0 with empty output).
#include "emulator/process_runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace prism_e2b::local::detail;
namespace asio = boost::asio;

namespace {

struct collected {
    std::size_t out = 0, err = 0;
    bool ended = false;
    int exit_code = -1;
};

/// Every event of one process until its end (or the queue closes without one).
asio::awaitable<collected> collect(std::shared_ptr<event_queue> q)
{
    collected c;
    for (;;) {
        co_await q->wait();
        process_event ev;
        while (q->pop(ev)) {
            if (ev.type == process_event::kind::stdout_data) c.out += ev.data.size();
            if (ev.type == process_event::kind::stderr_data) c.err += ev.data.size();
            if (ev.type == process_event::kind::end) {
                c.ended = true;
                c.exit_code = ev.exit_code;
                co_return c;
            }
        }
        if (q->closed()) co_return c;
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_process_output)

BOOST_AUTO_TEST_CASE(no_output_is_lost_when_the_grace_after_exit_is_zero)
{
    constexpr int processes = 60;
    constexpr std::size_t bytes = 200 * 1024;
    asio::io_context ioc;
    auto work = asio::make_work_guard(ioc);
    std::vector<std::jthread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&] { ioc.run(); });
    struct stop_on_exit {  // a failed REQUIRE still joins the threads
        asio::io_context& ioc;
        ~stop_on_exit() { ioc.stop(); }
    } const stopper{ioc};

    // Both streams written in full, then the shell exits while a child keeps them open:
    // the end comes through the grace path, not through the pipes closing.
    spawn_spec spec;
    spec.cmd = "/bin/sh";
    spec.args = {"-c", "head -c " + std::to_string(bytes) + " /dev/zero; head -c " + std::to_string(bytes) +
                           " /dev/zero >&2; sleep 5 & exit 0"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.chdir_to = "/tmp";
    spec.output_grace = std::chrono::milliseconds(0);
    std::vector<std::future<collected>> results;
    std::vector<std::shared_ptr<process>> running;
    for (int i = 0; i < processes; ++i) {
        auto p = process::spawn(ioc.get_executor(), spec, process_config{spec.cmd, spec.args, {}, {}, {}}, {});
        BOOST_TEST_REQUIRE(p.has_value(), p.error().message());
        auto q = (*p)->subscribe(ioc.get_executor());
        BOOST_TEST_REQUIRE(q != nullptr);
        results.push_back(asio::co_spawn(ioc, collect(q), asio::use_future));
        (*p)->start_io();
        running.push_back(*p);
    }
    int complete = 0;
    for (auto& r : results) {
        BOOST_TEST_REQUIRE((r.wait_for(std::chrono::minutes(2)) == std::future_status::ready));
        auto const c = r.get();
        BOOST_TEST(c.ended);
        BOOST_TEST(c.exit_code == 0);
        BOOST_TEST(c.out == bytes);
        BOOST_TEST(c.err == bytes);
        complete += c.ended && c.out == bytes && c.err == bytes ? 1 : 0;
    }
    BOOST_TEST(complete == processes);
    for (auto& p : running) ::kill(-static_cast<pid_t>(p->pid()), SIGKILL);  // the background sleeps
    running.clear();
    work.reset();
}

BOOST_AUTO_TEST_SUITE_END()
