// A forwarding HTTP/1.1 proxy in front of the control plane that records the
// server's `Server-Timing: app;dur=<ms>` of every response. The native client
// does not expose response headers, so the pause/resume benchmark points
// api_url here to split each operation into server time and client time for
// the very same request. The extra loopback hop (tens of microseconds) stays in
// the "client" share, for both the C++ and the JS side alike.
#ifndef PRISM_E2B_BENCH_TIMING_PROXY_HPP
#define PRISM_E2B_BENCH_TIMING_PROXY_HPP

#include <memory>
#include <string>
#include <vector>

namespace prism_e2b::bench {

struct timed_exchange {
    std::string method;
    std::string target;
    int status = 0;
    double server_ms = -1;   ///< from Server-Timing; -1 when absent
    double upstream_ms = 0;  ///< proxy -> server -> proxy round trip
};

/// Runs on its own thread (own io_context). Thread safety: every member may be
/// called from any thread (records behind a mutex).
class timing_proxy {
public:
    timing_proxy();
    ~timing_proxy();  ///< stops the thread
    timing_proxy(timing_proxy const&) = delete;
    timing_proxy& operator=(timing_proxy const&) = delete;

    /// Listens on 127.0.0.1:0 and forwards to 127.0.0.1:upstream_port. Empty on
    /// success, else the error text.
    std::string start(int upstream_port);
    std::string url() const;
    /// Every exchange recorded so far, then forgets them.
    std::vector<timed_exchange> take();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

/// Parses the `dur` of the `app` metric of a Server-Timing value; -1 if absent.
double parse_server_timing(std::string const& value);

}  // namespace prism_e2b::bench

#endif
