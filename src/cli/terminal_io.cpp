// stdin_reader, write_all, raw_mode and terminal_size (terminal_io.hpp).
#include "cli/terminal_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace asio = boost::asio;

namespace prism_e2b::cli {

stdin_reader::stdin_reader(asio::any_io_executor ex)
{
    saved_flags_ = ::fcntl(0, F_GETFL);
    int const fd = ::dup(0);
    if (fd < 0) return;
    stream_.emplace(ex);
    boost::system::error_code ec;
    stream_->assign(fd, ec);  // epoll refuses regular files and /dev/null: plain reads then
    if (ec) {
        ::close(fd);
        stream_.reset();
    }
}

stdin_reader::~stdin_reader()
{
    if (stream_) {
        boost::system::error_code ec;
        stream_->close(ec);
    }
    if (saved_flags_ >= 0) ::fcntl(0, F_SETFL, saved_flags_);
}

asio::awaitable<std::optional<std::string>> stdin_reader::read()
{
    std::string buf(64 * 1024, '\0');
    if (cancelled_) co_return std::nullopt;
    if (!stream_) {
        ssize_t n = 0;
        do n = ::read(0, buf.data(), buf.size());
        while (n < 0 && errno == EINTR);
        if (n <= 0) co_return std::nullopt;
        buf.resize(static_cast<std::size_t>(n));
        co_return buf;
    }
    auto [ec, n] = co_await stream_->async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (ec || n == 0 || cancelled_) co_return std::nullopt;
    buf.resize(n);
    co_return buf;
}

void stdin_reader::cancel() noexcept
{
    cancelled_ = true;
    if (stream_) {
        boost::system::error_code ec;
        stream_->cancel(ec);
    }
}

bool write_all(int fd, std::string_view bytes)
{
    while (!bytes.empty()) {
        auto n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, -1);
            continue;
        }
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

raw_mode::raw_mode(int fd) : fd_(fd)
{
    termios t{};
    if (!::isatty(fd) || ::tcgetattr(fd, &t) != 0) return;
    saved_ = t;
    ::cfmakeraw(&t);
    if (::tcsetattr(fd, TCSANOW, &t) != 0) saved_.reset();
}

raw_mode::~raw_mode()
{
    if (saved_) ::tcsetattr(fd_, TCSANOW, &*saved_);
}

std::optional<e2b::pty_size> terminal_size(int fd)
{
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0) return std::nullopt;
    return e2b::pty_size{ws.ws_col, ws.ws_row};
}

}  // namespace prism_e2b::cli
