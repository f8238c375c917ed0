// Configuration of the real E2B client, resolved like the official SDK's.
#ifndef PRISM_E2B_E2B_CLIENT_OPTIONS_HPP
#define PRISM_E2B_E2B_CLIENT_OPTIONS_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/log.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace prism_e2b::e2b {

/// Every field left empty is taken from the environment as the official SDK
/// does: api_key from E2B_API_KEY, domain from E2B_DOMAIN (default "e2b.app"),
/// api_url from E2B_API_URL (default "https://api.<domain>"), sandbox_url from
/// E2B_SANDBOX_URL (default "https://sandbox.<domain>" for E2B's own domains
/// e2b.app, e2b.dev, e2b.pro, e2b-staging.dev, as the official SDK; otherwise
/// per sandbox "https://49983-<id>.<domain>").
struct client_options {
    std::optional<std::string> api_key;      ///< secret; never logged
    std::optional<std::string> domain;       ///< E2B_DOMAIN, default "e2b.app"
    std::optional<std::string> api_url;      ///< the control plane's origin (E2B_API_URL)
    std::optional<std::string> sandbox_url;  ///< one envd origin for all sandboxes

    /// Bound on one attempt of a request (control plane) or of a unary envd
    /// call, and on a process stream's opening; 0 disables.
    std::chrono::milliseconds request_timeout{60000};
    /// Bound on a whole call, retries and their backoff included (a process
    /// stream: up to its response head). Default 60 s, the official SDK's
    /// request timeout: a server that never answers fails a call in 60 s, not
    /// in (1 + max_retries) x request_timeout. Time spent waiting in line for a
    /// pooled connection (max_connections_per_origin) does not count. 0 disables.
    std::chrono::milliseconds call_timeout{60000};
    /// Bound on resolve + TCP connect + TLS handshake.
    std::chrono::milliseconds connect_timeout{10000};
    /// The complete response head must arrive this long after sending of the
    /// request began; a server that drips its headers or never answers is cut with
    /// errc::timed_out. 0: only request_timeout / call_timeout bound it.
    std::chrono::milliseconds header_timeout{30000};
    /// Longest silence inside a (buffered) response body; 0: only
    /// request_timeout / call_timeout bound it.
    std::chrono::milliseconds read_idle_timeout{30000};
    /// A process stream silent this long (no output and no keepalive, which envd
    /// sends every 50 s) is presumed dead: async_next() reports errc::unknown_outcome.
    /// Default three keepalive intervals; 0 waits forever.
    std::chrono::milliseconds stream_idle_timeout{150000};
    /// Retries of 429 (Retry-After honoured) and of idempotent requests on 5xx/network errors.
    unsigned max_retries = 3;
    /// First backoff step; doubled per retry, with full jitter.
    std::chrono::milliseconds retry_base_delay{250};

    /// HTTP/2 (as the official SDK, whose undici agents set allowH2): TLS
    /// connections offer ALPN h2 and http/1.1 and use HTTP/2 when the server
    /// picks it, multiplexing streams over few connections.
    bool http2 = true;
    /// HTTP/2 on plain http:// origins without negotiation (h2c, prior
    /// knowledge). Off by default, as in the official SDK; the server must speak
    /// HTTP/2 from the first byte (prism-e2b-local does).
    bool h2c_prior_knowledge = false;
    /// With HTTP/2: streams one connection carries (at most the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS) before another connection to the origin is
    /// opened. Past max_connections_per_origin, streams queue on the least loaded one.
    std::size_t max_streams_per_connection = 100;
    /// Connections kept per origin (HTTP/1.1: one per request in flight; HTTP/2:
    /// each carries up to max_streams_per_connection). 200, the official SDK's
    /// envd RPC connection limit.
    std::size_t max_connections_per_origin = 200;
    /// An idle pooled connection older than this is closed instead of reused.
    std::chrono::milliseconds pool_idle_timeout{30000};
    /// Client-wide cap on envd requests in flight; more wait in FIFO order.
    std::size_t max_inflight_envd_requests = 2000;
    /// Client-wide cap on process and watch streams being opened at once (from
    /// the call until the response head); more wait in FIFO order before they
    /// build their request. An open stream no longer counts. A fan-out of
    /// thousands of streams then holds the buffers and coroutine frames of an
    /// opening only this many times over, instead of once per stream, interleaved
    /// with the streams already held (bench/README.md: 8.3 KiB of client RSS per
    /// held stream for 2,000 opened at once, 22 KiB without a cap). 0: no cap.
    std::size_t max_opening_streams = 64;

    /// Cap on a JSON reply (control plane, envd unary calls), decoded size,
    /// enforced while reading: a larger reply fails with errc::limit_exceeded
    /// and the client holds at most the cap plus a small constant.
    std::size_t max_response_bytes = 32u << 20;
    /// Cap on a file read through read_file(), decoded size, enforced while reading.
    std::size_t max_file_bytes = 256u << 20;
    /// Send Accept-Encoding: gzip and decode gzip replies as they arrive (the
    /// caps above bound the decoded size, so a gzip bomb fails at the cap).
    bool accept_gzip = true;
    /// Send write_file() bodies gzip-compressed (Content-Encoding: gzip). Off by
    /// default: set it only for an envd that accepts compressed uploads
    /// (prism-e2b-local does not yet).
    bool gzip_uploads = false;

    /// Extra CA bundle (PEM file) trusted in addition to the system store. Peer
    /// verification is always on; there is no way to turn it off.
    std::optional<std::string> ca_file;
    std::string user_agent = "prism-e2b/0.1.0";  ///< User-Agent header
    log_sink logger;                             ///< receives redacted log lines; empty: no logging
};

/// Options with every empty field filled from the environment and defaults.
struct resolved_client_options {
    std::string api_key;                     ///< secret; never logged
    std::string domain;                      ///< the E2B domain
    std::string api_url;                     ///< the control plane's origin
    std::optional<std::string> sandbox_url;  ///< one envd origin for all sandboxes; absent: per sandbox
    client_options raw;                      ///< the options as given
};

/// Fills empty fields from E2B_* variables and defaults. Errors:
/// errc::invalid_argument when no API key is given or set, or a URL is not http(s).
PRISM_E2B_API result<resolved_client_options> resolve_client_options(client_options options);

}  // namespace prism_e2b::e2b

#endif
