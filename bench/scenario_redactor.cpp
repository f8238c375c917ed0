// Redactor scaling: the exec path and the redaction every error and log line
// goes through, with 10 and with 10,000 envd tokens registered (as a host with
// that many live sandboxes would have), in alternating blocks of the same run.
// Side "cpp" has 10 tokens, side "cpp_10k" 10,000. Execs: cfg.n * 4 per side.
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/redactor.hpp>

#include "io_run.hpp"
#include "progress_bar.hpp"
#include "resource_usage.hpp"
#include "scenario.hpp"
#include "stats.hpp"

#include <random>

namespace prism_e2b::bench {

namespace asio = boost::asio;

namespace {

constexpr std::size_t few_tokens = 10;
constexpr std::size_t many_tokens = 10000;

std::string filler_scope(std::size_t i) { return "bench-redactor-" + std::to_string(i); }

/// Keeps exactly `count` filler tokens (random 32-hex, like envd's) registered.
class token_filler {
public:
    void resize(std::size_t count)
    {
        auto& r = secret_redactor::global();
        for (; live_ > count; --live_) r.release(filler_scope(live_ - 1));
        for (; live_ < count; ++live_) r.add(token(live_), filler_scope(live_));
    }
    ~token_filler() { resize(0); }

private:
    std::string token(std::size_t i)
    {
        while (tokens_.size() <= i) {
            static constexpr char hex[] = "0123456789abcdef";
            std::string t(32, '0');
            for (auto& c : t) c = hex[rng_() & 15];
            tokens_.push_back(std::move(t));
        }
        return tokens_[i];
    }
    std::mt19937_64 rng_{42};
    std::vector<std::string> tokens_;
    std::size_t live_ = 0;
};

}  // namespace

std::string run_redactor(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    std::size_t const execs = cfg.n * 4;
    std::size_t const block = std::min<std::size_t>(10, execs);
    std::size_t const lines_per_exec = 20;
    report.params["execs_per_side"] = execs;
    report.params["block"] = block;
    report.params["tokens"] = boost::json::array{few_tokens, many_tokens};
    report.params["exec"] = "exec_file /bin/true through the adapter";
    report.params["log_line"] = "a 160-byte error line redacted and turned into prism_e2b::error";
    side_report* sides[2] = {&report.side("cpp", "10 tokens registered"),
                             &report.side("cpp_10k", "10,000 tokens registered")};
    std::size_t const counts[2] = {few_tokens, many_tokens};
    double cpu[2] = {0, 0};
    token_filler filler;

    std::string err = run_io(cfg.threads, [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
        auto const co = client_options_for(srv);
        auto client = e2b::make_client(ex, co);
        if (!client) co_return "client: " + client.error().to_string();
        // A sandbox admits at most max_commands execs: start a fresh one before that.
        std::shared_ptr<e2b_sandbox> sb;
        std::size_t admitted = 0;
        auto fresh_sandbox = [&]() -> asio::awaitable<std::string> {
            if (sb) (void)co_await sb->async_kill();
            e2b_sandbox_options o;
            o.client = *client;
            o.timeout = std::chrono::minutes(10);
            o.limits.max_commands = sandbox_limit_caps::max_commands;
            auto r = co_await async_create_e2b_sandbox(ex, std::move(o));
            if (!r) co_return "create: " + r.error().to_string();
            sb = *r;
            admitted = 0;
            co_return std::string();
        };
        if (auto e = co_await fresh_sandbox(); !e.empty()) co_return e;
        std::string const line =
            "process.Start failed: connection reset by peer while reading the response of sandbox "
            "i4d2c9fhe1x0 (HTTP 502, upstream envd unavailable, retry later)";
        std::string failure;
        progress_bar bar("redactor", 2 * execs, cfg.quiet);
        for (std::size_t done = 0; done < execs && failure.empty(); done += block) {
            std::size_t const k = std::min(block, execs - done);
            for (int s = 0; s < 2 && failure.empty(); ++s) {
                if (admitted + k > sandbox_limit_caps::max_commands) failure = co_await fresh_sandbox();
                admitted += k;
                filler.resize(counts[s]);
                auto const c0 = sample_self();
                for (std::size_t i = 0; i < k && failure.empty(); ++i) {
                    exec_file_request req;
                    req.file = "/bin/true";
                    auto const t0 = std::chrono::steady_clock::now();
                    auto r = co_await sb->async_exec_file(std::move(req));
                    sides[s]->op("exec").push_back(to_ms(std::chrono::steady_clock::now() - t0));
                    if (!r)
                        failure = "exec: " + r.error().to_string();
                    else if (r->exit_code != 0)
                        failure = "exec: /bin/true did not exit 0";
                    auto const t1 = std::chrono::steady_clock::now();
                    for (std::size_t l = 0; l < lines_per_exec; ++l) {
                        error e(errc::server_error, line);
                        if (e.message().size() != line.size()) failure = "the log line was redacted";
                    }
                    sides[s]->op("error_line").push_back(to_ms(std::chrono::steady_clock::now() - t1) / lines_per_exec);
                    bar.tick();
                }
                cpu[s] += sample_self().cpu_seconds() - c0.cpu_seconds();
            }
        }
        bar.finish();
        filler.resize(0);
        (void)co_await sb->async_kill();
        co_return failure;
    });
    for (int s = 0; s < 2; ++s) {
        sides[s]->set_metric("cpu_seconds", cpu[s]);
        sides[s]->set_metric("tokens_registered", static_cast<double>(counts[s]));
    }
    return err;
}

}  // namespace prism_e2b::bench
