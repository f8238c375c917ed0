// The attested recovery backend refuses each mismatch with a silent null.
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/process_ref.hpp>

#include "adapter_test_util.hpp"
#include "thread_probe_executor.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;

namespace {

e2b_process_recovery_expectations expect(std::string id, std::string ws, label_map labels)
{
    e2b_process_recovery_expectations e;
    e.expected_sandbox_id = std::move(id);
    e.expected_workspace = std::move(ws);
    e.expected_labels = std::move(labels);
    return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_process_recovery)

BOOST_AUTO_TEST_CASE(attaches_only_when_every_expectation_matches)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    label_map const created = {{"app.owner", "alice"}, {"team", "core"}};
    label_map const good_labels = {{"app.owner", "alice"}};
    label_map const wrong_value = {{"app.owner", "mallory"}};
    label_map const missing = {{"missing", "x"}};
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.labels = created;
        auto sb = co_await make_sandbox(ex, fake, o);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST_REQUIRE(h.has_value());
        auto const ref = (*h)->ref();
        co_await (*h)->async_release();
        auto const id = sb->id();

        auto refused = [&](e2b_process_recovery_expectations e, std::string r) -> asio::awaitable<bool> {
            auto backend = create_e2b_process_recovery_backend(sb, std::move(e));
            auto got = co_await backend->async_attach(std::move(r), nullptr);
            co_return got.has_value() && *got == nullptr;
        };
        BOOST_TEST(co_await refused(expect("sbx-other", "/workspace", good_labels), ref));
        BOOST_TEST(co_await refused(expect("", "/workspace", good_labels), ref));
        BOOST_TEST(co_await refused(expect(id, "/elsewhere", good_labels), ref));
        BOOST_TEST(co_await refused(expect(id, "/workspace", wrong_value), ref));
        BOOST_TEST(co_await refused(expect(id, "/workspace", missing), ref));
        BOOST_TEST(co_await refused(expect(id, "/workspace", good_labels), "prism-e2b-proc:not-base64!"));
        BOOST_TEST(co_await refused(expect(id, "/workspace", good_labels), "not a ref at all"));
        auto rec = *decode_process_ref(ref);
        auto other = rec;
        other.sandbox_id = "sbx-other";
        BOOST_TEST(co_await refused(expect(id, "/workspace", good_labels), encode_process_ref(other)));
        auto other_ws = rec;
        other_ws.workspace = "/elsewhere";
        BOOST_TEST(co_await refused(expect(id, "/workspace", good_labels), encode_process_ref(other_ws)));
        BOOST_TEST(fake->count("connect_process") == 0u);  // nothing was attached

        // The vendor's metadata, not the local copy, is attested.
        fake->fail_next("get_sandbox_info", error(errc::server_error, "boom with details", {"info", 500}));
        BOOST_TEST(co_await refused(expect(id, "/workspace", good_labels), ref));

        auto backend = create_e2b_process_recovery_backend(sb, expect(id, "/workspace", good_labels));
        auto attached = co_await backend->async_attach(ref, nullptr);
        BOOST_TEST_REQUIRE((attached.has_value() && *attached != nullptr));
        auto ok = std::move(*attached);
        BOOST_TEST(ok->pid() == rec.pid);
        BOOST_TEST(fake->count("connect_process") == 1u);
        co_await ok->async_kill();
        auto gone = co_await backend->async_attach(ref, nullptr);
        BOOST_TEST((gone.has_value() && *gone == nullptr));
    });
}

BOOST_AUTO_TEST_CASE(a_null_sandbox_is_refused)
{
    auto backend = create_e2b_process_recovery_backend(nullptr, expect("sbx-1", "/workspace", {}));
    auto got = run_coro([&](auto) { return backend->async_attach("prism-e2b-proc:x", nullptr); });
    BOOST_TEST((got.has_value() && *got == nullptr));
}

// Without a sandbox there is no executor of the backend's own: the refusal
// must still come from the caller's thread, never from a borrowed one (the
// caller may destroy its io_context as soon as the handler has run).
BOOST_AUTO_TEST_CASE(a_null_sandbox_completes_from_the_callers_thread)
{
    asio::io_context ioc;
    auto probe = probe_this_thread(ioc.get_executor());
    auto backend = create_e2b_process_recovery_backend(nullptr, expect("sbx-1", "/workspace", {}));
    std::optional<result<std::unique_ptr<process_handle>>> got;
    backend->async_attach(
        "prism-e2b-proc:x", nullptr,
        asio::bind_executor(probe, [&](result<std::unique_ptr<process_handle>> r) { got = std::move(r); }));
    BOOST_TEST(!got.has_value());  // never inline
    ioc.run();
    BOOST_TEST_REQUIRE(got.has_value());
    BOOST_TEST((got->has_value() && **got == nullptr));
    BOOST_TEST(probe.foreign_submissions() == 0);

    // Started from inside the io_context, on its executor: still never inline.
    got.reset();
    bool inline_completion = true;
    asio::post(ioc, [&] {
        backend->async_attach("prism-e2b-proc:x", nullptr,
                              asio::bind_executor(ioc.get_executor(), [&](result<std::unique_ptr<process_handle>> r) {
                                  got = std::move(r);
                              }));
        inline_completion = got.has_value();
    });
    ioc.restart();
    ioc.run();
    BOOST_TEST(!inline_completion);
    BOOST_TEST((got.has_value() && got->has_value() && **got == nullptr));
}

BOOST_AUTO_TEST_SUITE_END()
