// One HTTP/2 client connection: an nghttp2 client session over a connection
// (TLS with ALPN h2, or h2c with prior knowledge) on the connection's strand,
// carrying many streams at once. Flow control follows the reader: received
// DATA is acknowledged (WINDOW_UPDATE) only as read_some() takes it, so a slow
// reader holds at most its stream window. GOAWAY stops new streams (the
// transport opens another connection); streams above the peer's last stream id
// fail replayable, the others finish. RST_STREAM is a typed error (h2_category).
#ifndef PRISM_E2B_WIRE_H2_CONNECTION_HPP
#define PRISM_E2B_WIRE_H2_CONNECTION_HPP

#include <prism_e2b/error.hpp>

#include "wire/connection.hpp"
#include "wire/http_message.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace prism_e2b::wire {

/// RST_STREAM and GOAWAY error codes (RFC 9113 section 7) as error codes.
boost::system::error_category const& h2_category() noexcept;

/// The local side's HTTP/2 settings.
struct h2_settings {
    std::uint32_t stream_window = 256u << 10;     ///< per-stream receive window (bytes buffered per slow reader)
    std::uint32_t connection_window = 16u << 20;  ///< whole-connection receive window
    std::uint32_t max_streams = 100;              ///< streams this client opens at most on one connection
};

struct h2_stream;  // one request/response; private to the .cpp

/// Thread safety: accepting(), active() and the counters from any thread;
/// open(), read() and the rest on strand() (through on_strand()).
class h2_connection : public std::enable_shared_from_this<h2_connection> {
public:
    /// Starts the session on `c` (already connected; call on its strand).
    static result<std::shared_ptr<h2_connection>> start(std::shared_ptr<connection> c, h2_settings s, std::string what);
    ~h2_connection();

    strand_type const& strand() const noexcept { return conn_->strand; }
    /// Takes new streams: open, no GOAWAY, stream ids left.
    bool accepting() const noexcept { return accepting_.load(); }
    /// Streams reserved or open (the transport's load figure).
    std::size_t active() const noexcept { return active_.load(); }
    /// Streams this connection takes before the transport prefers another:
    /// min(our max_streams, the peer's SETTINGS_MAX_CONCURRENT_STREAMS).
    std::size_t capacity() const noexcept { return capacity_.load(); }
    /// Counts a stream about to be opened (the transport picks under its lock).
    void reserve() noexcept { active_.fetch_add(1); }
    /// Gives back a reservation open() will not use.
    void unreserve() noexcept { active_.fetch_sub(1); }
    std::chrono::steady_clock::time_point idle_since() const noexcept;

    /// Submits `req` (base path prepended) and waits for its response head
    /// until `head_deadline`; uses one reservation. Errors: errc::timed_out,
    /// errc::cancelled, an h2_category code (RST_STREAM), the connection's
    /// error; `replayable` is set when the server cannot have processed it.
    boost::asio::awaitable<result<std::shared_ptr<h2_stream>>> open(origin const& o, http_request const& req,
                                                                    bool accept_gzip,
                                                                    std::chrono::steady_clock::time_point head_deadline,
                                                                    bool& replayable, std::string what);
    /// The next piece of the body (empty at its end); consumes it from the
    /// flow-control window. errc::timed_out after `idle` (0: none) of silence.
    boost::asio::awaitable<result<std::string>> read(std::shared_ptr<h2_stream> s, std::chrono::milliseconds idle,
                                                     std::string const& what);
    /// Resets the stream (CANCEL) unless it ended.
    void reset(std::shared_ptr<h2_stream> const& s) noexcept;
    /// Sends GOAWAY and closes once streams end; safe from any thread.
    void shutdown() noexcept;

    static int status_of(h2_stream const& s) noexcept;
    static header_list const& headers_of(h2_stream const& s) noexcept;
    static bool done_of(h2_stream const& s) noexcept;

    struct impl;  // the nghttp2 callbacks

private:
    explicit h2_connection(std::shared_ptr<connection> c);
    /// Reopens the flow-control windows for `n` bytes of `st` that were read or dropped.
    void give_back(h2_stream& st, std::size_t n) noexcept;
    std::shared_ptr<connection> conn_;
    std::unique_ptr<impl> impl_;
    std::atomic<bool> accepting_{true};
    std::atomic<std::size_t> active_{0};
    std::atomic<std::size_t> capacity_{100};
    std::atomic<std::int64_t> idle_since_{0};
};

/// The http_stream of an open HTTP/2 response.
std::unique_ptr<http_stream> make_h2_response_stream(std::shared_ptr<h2_connection> c, std::shared_ptr<h2_stream> s,
                                                     std::string what);

}  // namespace prism_e2b::wire

#endif
