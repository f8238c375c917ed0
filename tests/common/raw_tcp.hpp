// A blocking loopback TCP connection with byte-level control, for tests of the
// listener's limits (partial heads, bodies that never come, peers that stall).
#ifndef PRISM_E2B_TESTS_COMMON_RAW_TCP_HPP
#define PRISM_E2B_TESTS_COMMON_RAW_TCP_HPP

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

namespace prism_e2b::test {

class raw_tcp {
public:
    explicit raw_tcp(std::uint16_t port)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::runtime_error("socket failed");
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd_);
            throw std::runtime_error("connect failed");
        }
    }
    raw_tcp(raw_tcp&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    raw_tcp(raw_tcp const&) = delete;
    raw_tcp& operator=(raw_tcp const&) = delete;
    ~raw_tcp() { close(); }

    void close()
    {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    /// False once the peer is gone (EPIPE, ECONNRESET).
    bool send(std::string_view data)
    {
        while (!data.empty()) {
            ssize_t const n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            data.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    /// Reads until the end of a response head ("\r\n\r\n"); what was read (possibly
    /// partial) when the peer closed or `within` passed first.
    std::string read_head(std::chrono::milliseconds within = std::chrono::seconds(20))
    {
        auto const deadline = std::chrono::steady_clock::now() + within;
        while (got_.find("\r\n\r\n") == std::string::npos && receive(deadline) == got::data) {
        }
        auto const end = got_.find("\r\n\r\n");
        std::string head = end == std::string::npos ? got_ : got_.substr(0, end + 4);
        got_.erase(0, head.size());
        return head;
    }

    /// Everything the peer sends until it closes, or what came before `within` passed.
    std::string read_all(std::chrono::milliseconds within = std::chrono::seconds(20))
    {
        auto const deadline = std::chrono::steady_clock::now() + within;
        while (receive(deadline) == got::data) {
        }
        return std::exchange(got_, {});
    }

    /// True when the peer closed the connection (EOF or reset) within `within`;
    /// whatever it sent before is read and dropped.
    bool closed_by_peer(std::chrono::milliseconds within)
    {
        auto const deadline = std::chrono::steady_clock::now() + within;
        for (;;) {
            auto const r = receive(deadline);
            got_.clear();
            if (r != got::data) return r == got::closed;
        }
    }

private:
    enum class got { data, closed, deadline };

    /// Waits until `deadline` for bytes and appends them.
    got receive(std::chrono::steady_clock::time_point deadline)
    {
        for (;;) {
            auto const left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return got::deadline;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            char buf[4096];
            ssize_t const n = ::recv(fd_, buf, sizeof buf, 0);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) return got::closed;
            got_.append(buf, static_cast<std::size_t>(n));
            return got::data;
        }
    }

    int fd_ = -1;
    std::string got_;
};

}  // namespace prism_e2b::test

#endif
