// prism-e2b connect through a real pty (forkpty): what is typed reaches the
// remote shell, its output comes back, a window resize reaches it (stty size),
// and the CLI exits with the shell's exit code.
#include "cli_harness.hpp"

#include <boost/test/unit_test.hpp>

#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>

using namespace prism_e2b::test;

namespace {

/// The CLI on the slave side of a pty; the test types on the master side.
class terminal_session {
public:
    terminal_session(std::vector<std::string> args, std::map<std::string, std::string> const& env, winsize size)
    {
        std::vector<std::string> argv_s{prism_e2b_cli_binary()};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        auto envp_s = env_strings(env);
        auto argv = c_strings(argv_s);
        auto envp = c_strings(envp_s);
        pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
        if (pid_ < 0) throw std::runtime_error("forkpty failed");
        if (pid_ == 0) {
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
    }
    ~terminal_session()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(master_);
    }

    void type(std::string const& keys)
    {
        BOOST_REQUIRE(::write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
    }

    void resize(unsigned short rows, unsigned short cols)
    {
        winsize ws{rows, cols, 0, 0};
        ::ioctl(master_, TIOCSWINSZ, &ws);  // the kernel sends SIGWINCH to the CLI
    }

    /// Reads until `text` appeared in the output (since the last call), or `deadline`.
    bool wait_for(std::string const& text, std::chrono::milliseconds deadline = std::chrono::seconds(30))
    {
        auto const until = std::chrono::steady_clock::now() + deadline;
        for (;;) {
            if (auto at = output_.find(text, seen_); at != std::string::npos) {
                seen_ = at + text.size();
                return true;
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !read_some(left)) return false;
        }
    }

    /// The CLI's exit code once it exited (-1 after `deadline`); drains the output.
    int wait_exit(std::chrono::milliseconds deadline = std::chrono::seconds(30))
    {
        auto const until = std::chrono::steady_clock::now() + deadline;
        for (;;) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                while (read_some(std::chrono::milliseconds(0))) {
                }
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
            if (left.count() <= 0) return -1;
            if (!read_some(std::min(left, std::chrono::milliseconds(50)))) {
                // EOF or EIO on the master: the CLI closed the terminal; reap it.
                if (::waitpid(pid_, &status, 0) == pid_) {
                    pid_ = -1;
                    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
            }
        }
    }

    std::string const& output() const { return output_; }

private:
    /// False on EOF/EIO (the slave side is closed) or when nothing came in `wait`.
    bool read_some(std::chrono::milliseconds wait)
    {
        pollfd p{master_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return wait.count() == 0 ? false : true;
        char buf[4096];
        auto n = ::read(master_, buf, sizeof buf);
        if (n <= 0) return false;
        output_.append(buf, static_cast<std::size_t>(n));
        return true;
    }

    pid_t pid_ = -1;
    int master_ = -1;
    std::string output_;
    std::size_t seen_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_connect)

BOOST_AUTO_TEST_CASE(terminal_round_trip_resize_and_exit_code)
{
    local_server_fixture srv;
    auto env = cli_env(srv);
    auto created = run_cli({"create"}, env);
    BOOST_REQUIRE_MESSAGE(created.exit == 0, created.err);
    std::string const id = created.out.substr(0, created.out.size() - 1);
    env["TERM"] = "dumb";

    terminal_session t({"connect", id}, env, winsize{24, 80, 0, 0});
    // The initial size travels with Start: the remote stty reports the local one.
    // $((..)) makes the answer differ from the echoed keys.
    t.type("stty size; echo ready-$((6*7))\r");
    BOOST_REQUIRE_MESSAGE(t.wait_for("ready-42"), t.output());
    BOOST_TEST(t.output().find("24 80") != std::string::npos, t.output());

    // A resize reaches the shell. Keys and the resize travel as separate calls,
    // so ask again until the new size shows (bounded by the deadline).
    t.resize(33, 101);
    bool resized = false;
    for (int i = 0; i < 100 && !resized; ++i) {
        t.type("stty size; echo asked-$((i+1))\r");
        resized = t.wait_for("33 101", std::chrono::milliseconds(300));
    }
    BOOST_TEST(resized, t.output());

    t.type("echo hi-$((40+2)); exit 3\r");
    BOOST_TEST(t.wait_for("hi-42"), t.output());
    BOOST_TEST(t.wait_exit() == 3, t.output());
}

BOOST_AUTO_TEST_CASE(connect_to_a_missing_sandbox_exits_66)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    BOOST_TEST(run_cli({"connect", "nosuchsandbox"}, env).exit == 66);
}

BOOST_AUTO_TEST_SUITE_END()
