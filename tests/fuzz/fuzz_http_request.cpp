// The local server's HTTP request handling: raw bytes go through the
// listener's Beast parser (same limits) and request conversion, then through
// the server's real router and route handlers (control plane, admin, envd
// files, filesystem and process RPCs) on a real server_state, answered into a
// recording sink. Every request that parses gets exactly one answer, and no
// handler fails with an exception (the listener's 500).
//
// The input may hold several pipelined requests. SANDBOXID and ACCESSTOKEN in
// it stand for a running fixture sandbox's id and access token; the API key is
// "fuzz-api-key", the admin token "fuzz-admin-token" (the recorded corpus uses
// the same). process.Process/Start is not run: it would execute the input.
#include "emulator/engines/engine_factory.hpp"
#include "emulator/request_reader.hpp"
#include "emulator/server_state.hpp"
#include "fuzz_input.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/parser.hpp>

#include <cstdlib>
#include <filesystem>

using namespace prism_e2b;
using namespace prism_e2b::local;
using namespace prism_e2b::local::detail;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

/// Records the answer; the peer "closes" at once, so streams end after their first wait.
class recording_sink final : public response_sink {
public:
    int status = 0;
    int answers = 0;
    bool aborted = false;

    asio::awaitable<bool> send(http_response r) override
    {
        status = r.status;
        ++answers;
        co_return true;
    }
    asio::awaitable<bool> begin_stream(int st, std::string, header_list) override
    {
        status = st;
        ++answers;
        streaming_ = true;
        co_return true;
    }
    asio::awaitable<bool> write_chunk(std::string) override { co_return streaming_; }
    asio::awaitable<bool> finish_stream() override
    {
        bool const was = streaming_;
        streaming_ = false;
        co_return was;
    }
    void abort() override { aborted = true; }
    bool responded() const noexcept override { return answers > 0; }
    asio::awaitable<void> wait_peer_closed() override { co_return; }

private:
    bool streaming_ = false;
};

struct fixture {
    asio::io_context ioc;
    std::shared_ptr<server_state> st = std::make_shared<server_state>();
    std::shared_ptr<sandbox> sb;

    fixture()
    {
        st->ex = ioc.get_executor();
        st->opts.api_key = "fuzz-api-key";
        st->opts.admin_token = "fuzz-admin-token";
        st->opts.isolate = false;
        st->opts.cgroup_freezer = false;
        st->opts.max_file_bytes = 1u << 20;
        std::string dir = (std::filesystem::temp_directory_path() / "prism-e2b-fuzz-http-XXXXXX").string();
        if (!::mkdtemp(dir.data())) std::abort();
        st->state_dir = dir;
        st->owns_state_dir = true;
        std::filesystem::create_directories(st->state_dir / "sandboxes");
        st->templates_dir = st->state_dir / "templates";
        st->snapshots.open(st->state_dir / "snapshots");
        // What server::start() picks with isolation off: sandboxes are directories of this process's.
        auto engine = start_isolation_engine({"none", false, st->state_dir, {}});
        if (!engine) std::abort();
        st->engine = std::move(*engine);
        std::atexit([] { std::filesystem::remove_all(the().st->state_dir); });
    }

    static fixture& the()
    {
        static fixture f;
        return f;
    }

    /// The fixture sandbox, running; every other sandbox an input created is killed.
    void reset()
    {
        st->faults.reset();
        std::vector<std::shared_ptr<sandbox>> others;
        {
            std::lock_guard lk(st->mutex);
            for (auto const& [id, s] : st->sandboxes)
                if (s != sb) others.push_back(s);
        }
        for (auto const& s : others) st->kill_sandbox(s);
        bool usable = false;
        if (sb) {
            std::lock_guard lk(sb->mutex);
            usable = !sb->gone;
        }
        if (!usable) {
            template_spec base;
            base.id = "base";
            auto made = st->create_sandbox(base, {}, {}, std::chrono::hours(1), false, true, false);
            if (!made) std::abort();
            sb = *made;
        }
        bool paused = false;
        {
            std::lock_guard lk(sb->mutex);
            paused = sb->state != sandbox_state::running;
        }
        if (paused) st->resume_sandbox(sb, std::chrono::hours(1));
    }
};

void replace_all(std::string& s, std::string_view from, std::string const& to)
{
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
        s.replace(pos, from.size(), to);
}

std::size_t body_limit(server_state const& st, std::string_view method, std::string_view path)
{
    // As local_server.cpp configures the listener.
    if (method == "POST" && path == "/files") return st.opts.max_file_bytes;
    return 1u << 20;
}

/// One request through the router; false once the input has no further complete request.
bool serve_one(fixture& f, std::string_view& bytes)
{
    http::request_parser<http::string_body> parser;
    parser.header_limit(request_header_limit);
    parser.body_limit(boost::none);
    parser.eager(false);
    boost::beast::error_code ec;
    auto used = parser.put(asio::buffer(bytes.data(), bytes.size()), ec);
    bytes.remove_prefix(used);
    if (ec || !parser.is_header_done()) return false;
    auto const path = request_path(parser.get().target());
    auto const limit = body_limit(*f.st, std::string_view(parser.get().method_string()), path);
    if (auto const len = parser.content_length(); len && *len > limit) return false;  // the listener answers 413
    parser.body_limit(limit);
    parser.eager(true);
    while (!parser.is_done() && !bytes.empty()) {
        used = parser.put(asio::buffer(bytes.data(), bytes.size()), ec);
        bytes.remove_prefix(used);
        if (ec == http::error::need_more && used == 0) break;
        if (ec && ec != http::error::need_more) return false;
    }
    if (!parser.is_done()) return false;
    auto msg = parser.release();
    bool const keep_alive = msg.keep_alive();
    auto req = make_http_request(std::move(msg));
    if (req.path == "/process.Process/Start") return keep_alive;  // would run the input as a command
    std::string const line = req.method + " " + req.path;

    recording_sink sink;
    bool threw = false, finished = false;
    asio::co_spawn(f.ioc, dispatch(f.st, std::move(req), sink), [&](std::exception_ptr e) {
        finished = true;
        threw = e != nullptr;
    });
    f.ioc.restart();
    f.ioc.run_for(std::chrono::seconds(20));
    static bool const verbose = std::getenv("PRISM_E2B_FUZZ_VERBOSE") != nullptr;  // to see where seeds go
    if (verbose) std::fprintf(stderr, "%s -> %d\n", line.c_str(), sink.status);
    fuzz::require(finished, "a request is answered (no hang)");
    fuzz::require(!threw, "no route handler throws (the listener would answer 500)");
    fuzz::require(sink.answers == 1 || sink.aborted, "a request gets exactly one answer");
    fuzz::require(sink.status >= 100 && sink.status <= 599, "the answer has an HTTP status");
    fuzz::require(sink.status != 500, "bad input is never an internal error");
    f.reset();
    return keep_alive;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
    auto& f = fixture::the();
    f.reset();
    std::string input(fuzz::as_text(data, size));
    replace_all(input, "SANDBOXID", f.sb->id);
    replace_all(input, "ACCESSTOKEN", f.sb->access_token);
    std::string_view bytes(input);
    for (int i = 0; i < 8 && !bytes.empty(); ++i)
        if (!serve_one(f, bytes)) break;
    return 0;
}
