// prism-e2b files get|put|ls: the sandbox's files over envd's /files and
// filesystem.Filesystem/ListDir. get and put stream (one chunk in memory at a
// time; stdin from a pipe, having no size, is the exception) and show a
// progress line on a terminal or with --progress.
#include "cli/commands.hpp"
#include "cli/terminal_io.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

/// The progress line of one transfer on stderr: "<what>  12.0 / 64.0 MiB  18%  3.2 s",
/// redrawn at most five times a second from the transfer's progress callback.
/// Shown when stderr is a terminal (after half a second: short transfers stay
/// quiet) or always with --progress; erased at the end on a terminal, else
/// ended with a newline.
class progress_line {
public:
    progress_line(std::string what, bool forced) : what_(std::move(what)), tty_(::isatty(2) == 1)
    {
        enabled_ = tty_ || forced;
        delay_ = forced ? std::chrono::milliseconds(0) : std::chrono::milliseconds(500);
    }
    ~progress_line()
    {
        if (!shown_) return;
        write_all(2, tty_ ? std::string("\r\033[K") : std::string("\n"));
    }
    progress_line(progress_line const&) = delete;
    progress_line& operator=(progress_line const&) = delete;

    /// The callback for transfer_options::on_progress; `this` must outlive the transfer.
    e2b::progress_callback callback()
    {
        if (!enabled_) return {};
        return [this](e2b::transfer_progress const& p) { update(p); };
    }

private:
    void update(e2b::transfer_progress const& p)
    {
        auto const now = std::chrono::steady_clock::now();
        bool const last = p.total && p.bytes >= *p.total;
        if (now - t0_ < delay_ || (!last && now - drawn_ < std::chrono::milliseconds(200))) return;
        drawn_ = now;
        double const s = std::chrono::duration<double>(now - t0_).count();
        std::string line = what_ + "  " + human_bytes(p.bytes);
        if (p.total) {
            char pct[16];
            std::snprintf(pct, sizeof pct, "  %3d%%",
                          *p.total ? static_cast<int>(100.0 * static_cast<double>(p.bytes) / *p.total) : 100);
            line += " / " + human_bytes(*p.total) + pct;
        }
        char secs[32];
        std::snprintf(secs, sizeof secs, "  %.1f s", s);
        write_all(2, (tty_ ? "\r\033[K" : "\r") + line + secs);
        shown_ = true;
    }

    static std::string human_bytes(std::uint64_t n)
    {
        char buf[32];
        if (n >= (1u << 20))
            std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
        else if (n >= 1024)
            std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
        else
            std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
        return buf;
    }

    std::string what_;
    bool tty_;
    bool enabled_ = false;
    bool shown_ = false;
    std::chrono::milliseconds delay_{0};
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point drawn_{};
};

char const* type_name(e2b::file_type t)
{
    switch (t) {
        case e2b::file_type::file:
            return "file";
        case e2b::file_type::directory:
            return "dir";
        case e2b::file_type::symlink:
            return "symlink";
        case e2b::file_type::unspecified:
            break;
    }
    return "other";
}

struct get_options {
    std::string sandbox, remote, local = "-";
    bool progress = false;
};

asio::awaitable<int> get(std::shared_ptr<e2b::client> c, get_options o)
{
    auto t = co_await running_target(*c, "files get", o.sandbox);
    if (!t.target) co_return t.exit;
    // Streamed: one chunk in memory at a time, written out as it arrives.
    std::ofstream file;
    if (o.local != "-") {
        file.open(o.local, std::ios::binary | std::ios::trunc);
        if (!file) co_return fail(exit_io, "files get: cannot write " + o.local);
    }
    bool local_failed = false;
    e2b::chunk_sink sink = [&](std::string_view piece) -> result<void> {
        bool const ok = o.local == "-"
                            ? write_all(1, piece)
                            : static_cast<bool>(file.write(piece.data(), static_cast<std::streamsize>(piece.size())));
        if (ok) return {};
        local_failed = true;
        return error(errc::invalid_argument, "cannot write " + (o.local == "-" ? std::string("stdout") : o.local));
    };
    progress_line bar("downloading " + o.remote, o.progress);
    e2b::transfer_options opts;
    opts.on_progress = bar.callback();
    auto r = co_await c->async_read_file_stream(*t.target, o.remote, sink, opts);
    if (local_failed) co_return fail(exit_io, "files get: " + r.error().message());
    if (!r) co_return report("files get", r.error());
    if (file.is_open()) {
        file.close();
        if (!file) co_return fail(exit_io, "files get: cannot write " + o.local);
    }
    co_return exit_ok;
}

struct put_options {
    std::string sandbox, local, remote;
    bool progress = false;
};

/// A local file (or stdin redirected from one) as a streamed upload's source.
std::optional<e2b::chunk_source> file_source(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    auto const start = ::lseek(fd, 0, SEEK_CUR);
    if (start < 0) return std::nullopt;
    e2b::chunk_source s;
    s.size = static_cast<std::uint64_t>(st.st_size - start);
    s.read = [fd](std::span<char> buf) -> result<std::size_t> {
        for (;;) {
            auto const n = ::read(fd, buf.data(), buf.size());
            if (n >= 0) return static_cast<std::size_t>(n);
            if (errno != EINTR) return error(errc::invalid_argument, "cannot read the local file");
        }
    };
    s.rewind = [fd, start]() -> result<void> {
        if (::lseek(fd, start, SEEK_SET) < 0) return error(errc::invalid_argument, "cannot rewind the local file");
        return {};
    };
    return s;
}

asio::awaitable<int> put(std::shared_ptr<e2b::client> c, put_options o)
{
    int fd = 0;
    if (o.local != "-") {
        fd = ::open(o.local.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) co_return fail(exit_io, "files put: cannot read " + o.local);
    }
    struct closer {
        int fd;
        ~closer()
        {
            if (fd > 0) ::close(fd);
        }
    } close_fd{fd};
    auto source = file_source(fd);
    std::string piped;  // stdin from a pipe has no size: read whole, sent in one request
    if (!source) {
        char buf[65536];
        for (;;) {
            auto const n = ::read(fd, buf, sizeof buf);
            if (n == 0) break;
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) co_return fail(exit_io, "files put: cannot read " + o.local);
            piped.append(buf, static_cast<std::size_t>(n));
        }
    }
    auto t = co_await running_target(*c, "files put", o.sandbox);
    if (!t.target) co_return t.exit;
    if (!source) {
        auto r = co_await c->async_write_file(*t.target, o.remote, std::move(piped));
        if (!r) co_return report("files put", r.error());
        co_return exit_ok;
    }
    progress_line bar("uploading to " + o.remote, o.progress);
    e2b::transfer_options opts;
    opts.on_progress = bar.callback();
    auto r = co_await c->async_write_file_stream(*t.target, o.remote, *source, opts);
    if (!r) co_return report("files put", r.error());
    co_return exit_ok;
}

struct ls_options {
    std::string sandbox, path;
    std::uint32_t depth = 1;
    output_format format = output_format::text;
};

asio::awaitable<int> ls(std::shared_ptr<e2b::client> c, ls_options o)
{
    auto t = co_await running_target(*c, "files ls", o.sandbox);
    if (!t.target) co_return t.exit;
    auto r = co_await c->async_list_dir(*t.target, o.path, o.depth);
    if (!r) co_return report("files ls", r.error());
    if (o.format == output_format::json) {
        json::array out;
        for (auto const& e : *r)
            out.push_back(json::object{{"name", e.name},
                                       {"type", type_name(e.type)},
                                       {"path", e.path},
                                       {"size", e.size},
                                       {"permissions", e.permissions},
                                       {"owner", e.owner},
                                       {"modifiedTime", e.modified_time}});
        print_json(out);
        co_return exit_ok;
    }
    for (auto const& e : *r)
        std::cout << e.permissions << "  " << e.owner << "  " << e.size << "  " << e.modified_time << "  " << e.path
                  << (e.type == e2b::file_type::directory ? "/" : "") << "\n";
    std::cout.flush();
    co_return exit_ok;
}

}  // namespace

void add_files_commands(CLI::App& app, run_state& st)
{
    auto* files = app.add_subcommand("files", "copy files to and from a sandbox, list its directories");
    files->require_subcommand(1);

    auto g = std::make_shared<get_options>();
    auto* cget = files->add_subcommand("get", "download a file (to stdout with LOCAL - or absent)");
    cget->add_option("sandbox", g->sandbox, "the sandbox id")->required();
    cget->add_option("remote", g->remote, "path in the sandbox")->required();
    cget->add_option("local", g->local, "local path; - for stdout (the default)");
    cget->add_flag("--progress", g->progress, "show a progress line on stderr even when it is not a terminal");
    cget->callback([g, &st] {
        st.exit =
            run_with_client("files get", [g = *g](std::shared_ptr<e2b::client> c) { return get(std::move(c), g); });
    });

    auto p = std::make_shared<put_options>();
    auto* cput = files->add_subcommand("put", "upload a file (from stdin with LOCAL -), replacing the remote one");
    cput->add_option("sandbox", p->sandbox, "the sandbox id")->required();
    cput->add_option("local", p->local, "local path; - for stdin")->required();
    cput->add_option("remote", p->remote, "path in the sandbox")->required();
    cput->add_flag("--progress", p->progress, "show a progress line on stderr even when it is not a terminal");
    cput->callback([p, &st] {
        st.exit =
            run_with_client("files put", [p = *p](std::shared_ptr<e2b::client> c) { return put(std::move(c), p); });
    });

    auto l = std::make_shared<ls_options>();
    auto* cls = files->add_subcommand("ls", "list a directory in the sandbox");
    cls->add_option("sandbox", l->sandbox, "the sandbox id")->required();
    cls->add_option("path", l->path, "directory in the sandbox")->required();
    cls->add_option("--depth", l->depth, "levels to descend (default 1)")->check(CLI::Range(1u, 64u));
    add_format_options(cls, l->format);
    cls->callback([l, &st] {
        st.exit = run_with_client("files ls", [l = *l](std::shared_ptr<e2b::client> c) { return ls(std::move(c), l); });
    });
    for (auto* sub : {cget, cput, cls}) sub->footer(exit_codes_help());
}

}  // namespace prism_e2b::cli
