// Shared helpers of the wire tests: a log capture and client options that
// point both planes of the real client at an in-test server.
#ifndef PRISM_E2B_TESTS_UNIT_WIRE_CLIENT_FIXTURE_HPP
#define PRISM_E2B_TESTS_UNIT_WIRE_CLIENT_FIXTURE_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/log.hpp>

#include "test_http_server.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace prism_e2b::test {

/// Collects every log line the client emits (thread-safe).
struct log_capture {
    std::mutex mutex;
    std::vector<std::string> lines;

    log_sink sink()
    {
        return [this](log_level, std::string_view line) {
            std::lock_guard lock(mutex);
            lines.emplace_back(line);
        };
    }
    std::vector<std::string> snapshot()
    {
        std::lock_guard lock(mutex);
        return lines;
    }
};

inline e2b::client_options options_for(std::string const& url, log_capture* logs = nullptr)
{
    e2b::client_options o;
    o.api_key = "e2b_test_key_0123456789";
    o.api_url = url;
    o.sandbox_url = url;
    o.retry_base_delay = std::chrono::milliseconds(1);
    o.request_timeout = std::chrono::milliseconds(10000);
    o.connect_timeout = std::chrono::milliseconds(5000);
    if (logs) o.logger = logs->sink();
    return o;
}

inline e2b::envd_target target_for(std::string version = "0.5.7")
{
    e2b::envd_target t;
    t.sandbox_id = "sbx1";
    t.access_token = "envd-token-abcdef";
    t.envd_version = std::move(version);
    return t;
}

/// A Connect stream answer: each JSON message is one envelope, then the end-of-stream one.
inline scripted_response connect_stream(std::vector<std::string> messages, std::string trailer = "{}")
{
    scripted_response r;
    r.status = 200;
    r.headers = {{"Content-Type", "application/connect+json"}};
    for (auto const& m : messages) r.chunks.push_back(envelope_bytes(m));
    r.chunks.push_back(envelope_bytes(trailer, 0x02));
    return r;
}

}  // namespace prism_e2b::test

#endif
