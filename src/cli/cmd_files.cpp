// prism-e2b files get|put|ls: the sandbox's files over envd's /files and
// filesystem.Filesystem/ListDir. While a transfer runs and stderr is a
// terminal, a status line shows what moves and for how long.
#include "cli/commands.hpp"
#include "cli/terminal_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

/// The status line of one transfer: nothing for the first half second (short
/// transfers stay quiet), then "<what> … 3.2 s" redrawn five times a second,
/// erased when the transfer ends. Only when stderr is a terminal. The client's
/// read_file/write_file move whole buffers, so elapsed time is what there is to show.
class transfer_status {
public:
    transfer_status(asio::any_io_executor ex, std::string what)
        : timer_(std::make_shared<asio::steady_timer>(ex)), state_(std::make_shared<state>())
    {
        if (!::isatty(2)) return;
        asio::co_spawn(ex, draw(timer_, state_, std::move(what)), asio::detached);
    }
    ~transfer_status()
    {
        state_->stopped = true;  // a wait that completed already ends the loop too
        timer_->cancel();
        if (state_->shown) write_all(2, "\r\033[K");
    }
    transfer_status(transfer_status const&) = delete;
    transfer_status& operator=(transfer_status const&) = delete;

private:
    struct state {
        bool shown = false;
        bool stopped = false;
    };

    static asio::awaitable<void> draw(std::shared_ptr<asio::steady_timer> timer, std::shared_ptr<state> st,
                                      std::string what)
    {
        static constexpr char spin[] = {'|', '/', '-', '\\'};
        auto const t0 = std::chrono::steady_clock::now();
        timer->expires_after(std::chrono::milliseconds(500));
        for (unsigned i = 0;; ++i) {
            auto [ec] = co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec || st->stopped) co_return;
            double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            char line[64];
            std::snprintf(line, sizeof line, " %c %.1f s", spin[i % 4], s);
            write_all(2, "\r\033[K" + what + line);
            st->shown = true;
            timer->expires_after(std::chrono::milliseconds(200));
        }
    }

    std::shared_ptr<asio::steady_timer> timer_;
    std::shared_ptr<state> state_;
};

std::string human_bytes(std::size_t n)
{
    char buf[32];
    if (n >= (1u << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
    else if (n >= 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
    else
        std::snprintf(buf, sizeof buf, "%zu B", n);
    return buf;
}

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
};

asio::awaitable<int> get(std::shared_ptr<e2b::client> c, get_options o)
{
    auto t = co_await running_target(*c, "files get", o.sandbox);
    if (!t.target) co_return t.exit;
    auto ex = co_await asio::this_coro::executor;
    result<std::string> data;
    {
        transfer_status status(ex, "downloading " + o.remote);
        data = co_await c->async_read_file(*t.target, o.remote);
    }
    if (!data) co_return report("files get", data.error());
    if (o.local == "-") {
        if (!write_all(1, *data)) co_return fail(exit_io, "files get: cannot write to stdout");
        co_return exit_ok;
    }
    std::ofstream f(o.local, std::ios::binary | std::ios::trunc);
    f.write(data->data(), static_cast<std::streamsize>(data->size()));
    f.close();
    if (!f) co_return fail(exit_io, "files get: cannot write " + o.local);
    co_return exit_ok;
}

struct put_options {
    std::string sandbox, local, remote;
};

asio::awaitable<int> put(std::shared_ptr<e2b::client> c, put_options o)
{
    std::string data;
    if (o.local == "-") {
        data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::ifstream f(o.local, std::ios::binary);
        if (!f) co_return fail(exit_io, "files put: cannot read " + o.local);
        std::ostringstream ss;
        ss << f.rdbuf();
        if (f.bad()) co_return fail(exit_io, "files put: cannot read " + o.local);
        data = std::move(ss).str();
    }
    auto t = co_await running_target(*c, "files put", o.sandbox);
    if (!t.target) co_return t.exit;
    auto ex = co_await asio::this_coro::executor;
    result<e2b::entry_info> r;
    {
        transfer_status status(ex, "uploading " + human_bytes(data.size()) + " to " + o.remote);
        r = co_await c->async_write_file(*t.target, o.remote, std::move(data));
    }
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
    cget->callback([g, &st] {
        st.exit =
            run_with_client("files get", [g = *g](std::shared_ptr<e2b::client> c) { return get(std::move(c), g); });
    });

    auto p = std::make_shared<put_options>();
    auto* cput = files->add_subcommand("put", "upload a file (from stdin with LOCAL -), replacing the remote one");
    cput->add_option("sandbox", p->sandbox, "the sandbox id")->required();
    cput->add_option("local", p->local, "local path; - for stdin")->required();
    cput->add_option("remote", p->remote, "path in the sandbox")->required();
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
