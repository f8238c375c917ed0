// This process's own terminal and standard streams, for exec and connect:
// stdin read without blocking the io_context, stdout written in full, raw mode
// and the window size.
#ifndef PRISM_E2B_CLI_TERMINAL_IO_HPP
#define PRISM_E2B_CLI_TERMINAL_IO_HPP

#include <prism_e2b/e2b/pty.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <optional>
#include <string>
#include <termios.h>

namespace prism_e2b::cli {

/// Reads stdin: pipes, sockets and terminals through the reactor, anything
/// else (regular files, /dev/null) with plain reads, which do not block long.
/// Restores stdin's file status flags (O_NONBLOCK is shared with the parent
/// shell) on destruction. Single-threaded use.
class stdin_reader {
public:
    explicit stdin_reader(boost::asio::any_io_executor ex);
    ~stdin_reader();
    stdin_reader(stdin_reader const&) = delete;
    stdin_reader& operator=(stdin_reader const&) = delete;

    /// The next bytes (at most 64 KiB); std::nullopt at the end of input, on a
    /// read error or after cancel().
    boost::asio::awaitable<std::optional<std::string>> read();
    /// Ends a pending read() (it yields std::nullopt) and every later one.
    void cancel() noexcept;

private:
    int saved_flags_ = -1;
    bool cancelled_ = false;
    std::optional<boost::asio::posix::stream_descriptor> stream_;  // empty: plain reads of fd 0
};

/// Writes all of `bytes` to `fd`, waiting out EAGAIN (a terminal's O_NONBLOCK is
/// shared by stdin and stdout). False when the reader went away.
bool write_all(int fd, std::string_view bytes);

/// Puts a terminal into raw mode for its lifetime (keys go to the remote shell
/// as typed, Ctrl-C included); restores the previous mode on destruction.
/// Does nothing when `fd` is not a terminal.
class raw_mode {
public:
    explicit raw_mode(int fd);
    ~raw_mode();
    raw_mode(raw_mode const&) = delete;
    raw_mode& operator=(raw_mode const&) = delete;

private:
    int fd_;
    std::optional<termios> saved_;
};

/// The size of the terminal on `fd`; std::nullopt when it is not one.
std::optional<e2b::pty_size> terminal_size(int fd);

}  // namespace prism_e2b::cli

#endif
