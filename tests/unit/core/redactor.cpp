#include <prism_e2b/error.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/redactor.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace prism_e2b;

BOOST_AUTO_TEST_SUITE(test_redactor)

BOOST_AUTO_TEST_CASE(replaces_every_registered_secret)
{
    secret_redactor r;
    r.add("e2b_api_key_0123456789");
    r.add("envd-token-abcdef");
    r.add("envd-token-abcdef");  // twice is harmless
    auto out = r.redact("key=e2b_api_key_0123456789 token=envd-token-abcdef again e2b_api_key_0123456789.");
    BOOST_TEST(out == "key=[REDACTED] token=[REDACTED] again [REDACTED].");
    BOOST_TEST(r.contains_secret("x envd-token-abcdef y"));
    BOOST_TEST(!r.contains_secret("x envd-token-abcde y"));
    BOOST_TEST(r.is_secret("envd-token-abcdef"));
    BOOST_TEST(!r.is_secret("envd-token-abcdefg"));
    BOOST_TEST(r.redact("nothing secret here") == "nothing secret here");
    BOOST_TEST(r.redact("") == "");
}

BOOST_AUTO_TEST_CASE(secret_at_boundaries)
{
    secret_redactor r;
    r.add("SECRETVALUE");
    BOOST_TEST(r.redact("SECRETVALUE") == "[REDACTED]");
    BOOST_TEST(r.redact("SECRETVALUE tail") == "[REDACTED] tail");
    BOOST_TEST(r.redact("head SECRETVALUE") == "head [REDACTED]");
    BOOST_TEST(r.redact("SECRETVALUESECRETVALUE") == "[REDACTED]");  // one covered run
    BOOST_TEST(r.redact("SECRETVALU") == "SECRETVALU");
    BOOST_TEST(r.redact(std::string_view("a\0SECRETVALUE\0b", 15)) == std::string("a\0[REDACTED]\0b", 14));
}

BOOST_AUTO_TEST_CASE(overlapping_and_nested_secrets_leave_nothing)
{
    secret_redactor r;
    r.add("abcdef");
    r.add("defghi");  // overlaps the first on "def"
    auto out = r.redact("xx abcdefghi yy");
    BOOST_TEST(out == "xx [REDACTED] yy");
    BOOST_TEST(out.find("ghi") == std::string::npos);
    BOOST_TEST(out.find("abc") == std::string::npos);

    secret_redactor nested;
    nested.add("token");
    nested.add("my-token-long");  // contains the shorter one
    BOOST_TEST(nested.redact("a my-token-long b token c") == "a [REDACTED] b [REDACTED] c");

    secret_redactor self_overlap;
    self_overlap.add("aaaa");
    BOOST_TEST(self_overlap.redact("aaaaaa!") == "[REDACTED]!");
}

BOOST_AUTO_TEST_CASE(short_secrets_are_ignored)
{
    secret_redactor r;
    r.add("");
    r.add("a");
    r.add("abc");  // below min_secret_length (4)
    BOOST_TEST(r.redact("a abc cab") == "a abc cab");
    BOOST_TEST(!r.is_secret("abc"));
    r.add("abcd");
    BOOST_TEST(r.redact("a abcd") == "a [REDACTED]");
}

BOOST_AUTO_TEST_CASE(concurrent_add_and_redact)
{
    secret_redactor r;
    constexpr int writers = 2;
    constexpr int readers = 2;
    constexpr int per_writer = 500;
    std::atomic<int> published{0};  // secrets 0..published-1 are registered
    std::atomic<int> leaks{0};
    std::atomic<bool> done{false};
    auto secret = [](int i) { return "concurrent-secret-" + std::to_string(i) + "-x"; };

    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w)
        threads.emplace_back([&, w] {
            for (int i = w; i < writers * per_writer; i += writers) r.add(secret(i));
        });
    // A single publisher thread keeps `published` meaningful: it adds in order.
    std::thread publisher([&] {
        for (int i = 0; i < 1000; ++i) {
            r.add("ordered-secret-" + std::to_string(i) + "-y");
            published.store(i + 1, std::memory_order_release);
        }
        done = true;
    });
    for (int k = 0; k < readers; ++k)
        threads.emplace_back([&] {
            while (!done.load()) {
                int n = published.load(std::memory_order_acquire);
                if (n == 0) continue;
                auto s = "ordered-secret-" + std::to_string(n - 1) + "-y";
                auto out = r.redact("value: " + s + " end");
                if (out.find(s) != std::string::npos || !r.contains_secret(s)) ++leaks;
            }
        });
    publisher.join();
    for (auto& t : threads) t.join();
    BOOST_TEST(leaks.load() == 0);
    for (int i = 0; i < writers * per_writer; ++i) BOOST_TEST_REQUIRE(r.is_secret(secret(i)));
    BOOST_TEST(r.redact(secret(7) + secret(8)) == "[REDACTED]");
}

BOOST_AUTO_TEST_CASE(canary_never_reaches_what_logs_or_details)
{
    std::string const canary = "prism-canary-5e1f0a9c77d2";
    secret_redactor::global().add(canary);
    error e(errc::permission_denied, "token " + canary + " refused; raw=" + canary.substr(0, 8) + canary.substr(8),
            {"process.Start(" + canary + ")", 403, "permission_denied:" + canary});
    for (auto const& s : {e.message(), e.operation(), e.vendor_code(), e.to_string()})
        BOOST_TEST(s.find(canary) == std::string::npos);
    try {
        result<void> r = e;
        r.value();
        BOOST_FAIL("value() must throw");
    } catch (std::exception const& ex) {
        BOOST_TEST(std::string(ex.what()).find(canary) == std::string::npos);
        BOOST_TEST(std::string(ex.what()).find("[REDACTED]") != std::string::npos);
    }
    std::string logged;
    log_redacted([&](log_level, std::string_view line) { logged = line; }, log_level::error,
                 "connect failed with X-Access-Token: " + canary);
    BOOST_TEST(logged.find(canary) == std::string::npos);
    BOOST_TEST(logged.find("[REDACTED]") != std::string::npos);
    log_redacted({}, log_level::info, canary);  // an empty sink is a no-op
}

BOOST_AUTO_TEST_SUITE_END()
