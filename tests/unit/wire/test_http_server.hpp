// An in-test HTTP/1.1 server (plain or TLS) on 127.0.0.1:0 that records every
// request and replays scripted responses, including chunked bodies written
// piece by piece, delays, and cuts. Runs its own io_context on its own threads
// so client tests keep their io_context to themselves. Beast-free interface.
#ifndef PRISM_E2B_TESTS_UNIT_WIRE_TEST_HTTP_SERVER_HPP
#define PRISM_E2B_TESTS_UNIT_WIRE_TEST_HTTP_SERVER_HPP

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prism_e2b::test {

using test_headers = std::vector<std::pair<std::string, std::string>>;

struct recorded_request {
    std::string method;
    std::string target;
    test_headers headers;
    std::string body;
    std::size_t connection = 0;  ///< 1-based id of the accepted connection

    /// Case-insensitive; nullopt when absent.
    std::optional<std::string> header(std::string const& name) const;
    std::size_t header_count(std::string const& name) const;
    std::string path() const { return target.substr(0, target.find('?')); }
    std::string query() const
    {
        auto q = target.find('?');
        return q == std::string::npos ? std::string{} : target.substr(q + 1);
    }
};

struct scripted_response {
    int status = 200;
    test_headers headers;
    std::string body;  ///< sent with Content-Length when `chunks` is empty
    /// When set, the body is sent with Transfer-Encoding: chunked, one HTTP
    /// chunk per element, each written (and flushed) separately.
    std::vector<std::string> chunks;
    std::chrono::milliseconds chunk_delay{0};
    /// Close the connection after the chunks without the terminating chunk.
    bool cut = false;
    /// Answer with Connection: close and close afterwards.
    bool close = false;
    /// Raw bytes written instead of a formatted response (for garbage tests).
    std::optional<std::string> raw;

    static scripted_response json(int status, std::string body)
    {
        scripted_response r;
        r.status = status;
        r.headers = {{"Content-Type", "application/json"}};
        r.body = std::move(body);
        return r;
    }
    static scripted_response empty(int status)
    {
        scripted_response r;
        r.status = status;
        return r;
    }
};

using request_handler = std::function<scripted_response(recorded_request const&)>;

class test_http_server {
public:
    struct options {
        bool tls = false;
        std::string cert_chain_file;  ///< PEM, for tls
        std::string key_file;         ///< PEM, for tls
        int threads = 1;
    };

    explicit test_http_server(request_handler handler);
    test_http_server(request_handler handler, options opts);
    ~test_http_server();

    unsigned short port() const;
    /// "http://127.0.0.1:<port>" (or https://).
    std::string url() const;
    /// "<scheme>://<host>:<port>" with the given host name.
    std::string url(std::string const& host) const;

    std::vector<recorded_request> requests() const;
    std::size_t request_count() const;
    std::size_t accepted_connections() const;
    std::size_t max_open_connections() const;
    std::size_t failed_handshakes() const;
    /// Server names (SNI) the TLS clients sent; "" for a handshake without one.
    std::vector<std::string> sni_names() const;
    void set_handler(request_handler h);

    struct impl;

private:
    std::unique_ptr<impl> impl_;
};

/// Builds the bytes of one Connect envelope.
std::string envelope_bytes(std::string const& json, unsigned char flags = 0);

}  // namespace prism_e2b::test

#endif
