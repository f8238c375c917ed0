#include <prism_e2b/error.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/redactor.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <random>
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

BOOST_AUTO_TEST_CASE(scoped_secrets_live_until_their_scope_is_released)
{
    secret_redactor r;
    r.add("token-of-sandbox-a", "sbx-a");
    r.add("token-of-sandbox-b", "sbx-b");
    r.add("token-of-sandbox-a", "sbx-a");  // repeated: still one holder
    BOOST_TEST(r.size() == 2u);
    BOOST_TEST(r.redact("a=token-of-sandbox-a b=token-of-sandbox-b") == "a=[REDACTED] b=[REDACTED]");
    r.release("sbx-a");
    BOOST_TEST(r.size() == 1u);
    BOOST_TEST(!r.is_secret("token-of-sandbox-a"));
    BOOST_TEST(r.redact("a=token-of-sandbox-a b=token-of-sandbox-b") == "a=token-of-sandbox-a b=[REDACTED]");
    r.release("sbx-a");    // twice: no-op
    r.release("unknown");  // never seen: no-op
    BOOST_TEST(r.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_secret_held_twice_survives_one_release)
{
    secret_redactor r;
    r.add("shared-secret-value", "one");
    r.add("shared-secret-value", "two");
    r.release("one");
    BOOST_TEST(r.is_secret("shared-secret-value"));
    r.release("two");
    BOOST_TEST(!r.is_secret("shared-secret-value"));

    // Permanent registration outlives every scope, before or after it.
    r.add("api-key-forever", "scope");
    r.add("api-key-forever");
    r.release("scope");
    BOOST_TEST(r.is_secret("api-key-forever"));
    r.add("api-key-forever", "later");
    r.release("later");
    BOOST_TEST(r.is_secret("api-key-forever"));
    // An empty scope means permanent.
    r.add("empty-scope-secret", "");
    r.release("");
    BOOST_TEST(r.is_secret("empty-scope-secret"));
}

BOOST_AUTO_TEST_CASE(secrets_sharing_a_first_window_are_all_found)
{
    secret_redactor r;
    r.add("same-prefix-one");
    r.add("same-prefix-two-longer");
    r.add("same");  // exactly the window
    BOOST_TEST(r.redact("x same-prefix-two-longer y same-prefix-one z same w sam") ==
               "x [REDACTED] y [REDACTED] z [REDACTED] w sam");
    r.add("gone-soon", "s");
    r.release("s");
    // Removing one secret of a window keeps the others of that window.
    r.add("same-prefix-three", "t");
    r.release("t");
    BOOST_TEST(r.redact("same-prefix-one") == "[REDACTED]");
}

// The one-pass matcher against the obvious quadratic definition, on random
// texts over a small alphabet (many overlaps and shared windows).
BOOST_AUTO_TEST_CASE(matches_the_naive_definition_on_random_inputs)
{
    std::mt19937 rng(20261201);
    auto random_string = [&](std::size_t min_len, std::size_t max_len) {
        std::uniform_int_distribution<std::size_t> len(min_len, max_len);
        std::uniform_int_distribution<int> ch(0, 2);
        std::string s(len(rng), 'a');
        for (auto& c : s) c = static_cast<char>('a' + ch(rng));
        return s;
    };
    for (int round = 0; round < 300; ++round) {
        secret_redactor r;
        std::vector<std::string> secrets;
        for (int i = 0; i < 1 + round % 7; ++i) {
            secrets.push_back(random_string(4, 9));
            r.add(secrets.back());
        }
        std::string const text = random_string(0, 60);
        std::vector<bool> covered(text.size(), false);
        for (auto const& s : secrets)
            for (auto pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos + 1))
                std::fill(covered.begin() + static_cast<std::ptrdiff_t>(pos),
                          covered.begin() + static_cast<std::ptrdiff_t>(pos + s.size()), true);
        std::string expected;
        for (std::size_t i = 0; i < text.size();) {
            if (!covered[i]) {
                expected += text[i++];
                continue;
            }
            expected += secret_redactor::replacement;
            while (i < text.size() && covered[i]) ++i;
        }
        BOOST_TEST_REQUIRE(r.redact(text) == expected, "text " << text);
        bool const any = std::find(covered.begin(), covered.end(), true) != covered.end();
        BOOST_TEST_REQUIRE(r.contains_secret(text) == any, "text " << text);
    }
}

BOOST_AUTO_TEST_CASE(ten_thousand_scoped_tokens_come_and_go)
{
    secret_redactor r;
    auto token = [](int i) { return "envd-token-" + std::to_string(i * 7919) + "-" + std::to_string(i); };
    for (int i = 0; i < 10000; ++i) r.add(token(i), "sbx-" + std::to_string(i));
    BOOST_TEST(r.size() == 10000u);
    BOOST_TEST(r.redact("t=" + token(4242) + ";") == "t=[REDACTED];");
    for (int i = 0; i < 10000; i += 2) r.release("sbx-" + std::to_string(i));
    BOOST_TEST(r.size() == 5000u);
    BOOST_TEST(r.redact(token(4242)) == token(4242));
    BOOST_TEST(r.redact(token(4243)) == "[REDACTED]");
    for (int i = 1; i < 10000; i += 2) r.release("sbx-" + std::to_string(i));
    BOOST_TEST(r.size() == 0u);
    BOOST_TEST(r.redact(token(4243)) == token(4243));
}

// Readers never see a released-then-live secret unredacted while it is held,
// and registration/release from several threads keeps the tables consistent.
BOOST_AUTO_TEST_CASE(concurrent_scoped_add_release_and_redact)
{
    secret_redactor r;
    r.add("always-held-secret");
    std::atomic<bool> done{false};
    std::atomic<int> leaks{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w)
        threads.emplace_back([&, w] {
            for (int i = 0; i < 2000; ++i) {
                auto scope = "w" + std::to_string(w) + "-" + std::to_string(i % 50);
                r.add("churn-token-" + scope, scope);
                r.release(scope);
            }
        });
    threads.emplace_back([&] {
        while (!done.load()) {
            if (r.redact("k=always-held-secret").find("always-held-secret") != std::string::npos) ++leaks;
            (void)r.redact("churn-token-w0-1 churn-token-w1-2");
        }
    });
    threads[0].join();
    threads[1].join();
    done = true;
    threads[2].join();
    BOOST_TEST(leaks.load() == 0);
    BOOST_TEST(r.size() == 1u);
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
