// prism-e2b create [--template T] [--timeout S] [--label k=v]...
#include "cli/commands.hpp"

#include <iostream>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

int run(std::vector<std::string> const& args)
{
    e2b::create_sandbox_params params;
    for (std::size_t i = 0; i < args.size(); ++i) {
        auto const& a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (a == "--template") {
            auto v = value();
            if (!v || v->empty()) return usage_error("create", "--template needs a value");
            params.template_id = *v;
        } else if (a == "--timeout") {
            auto v = value();
            auto n = v ? parse_count(*v) : std::nullopt;
            if (!n || *n == 0) return usage_error("create", "--timeout needs whole seconds > 0");
            params.timeout = std::chrono::seconds(*n);
        } else if (a == "--label") {
            auto v = value();
            auto kv = v ? parse_label(*v) : std::nullopt;
            if (!kv) return usage_error("create", "--label needs k=v");
            params.metadata[kv->first] = kv->second;
        } else {
            return usage_error("create", "unexpected argument '" + a + "'");
        }
    }
    return run_with_client("create", [params](std::shared_ptr<e2b::client> c) -> asio::awaitable<int> {
        auto p = params;
        auto h = co_await c->create_sandbox(p);
        if (!h) co_return report("create", h.error());
        std::cout << h->sandbox_id << std::endl;
        co_return exit_ok;
    });
}

bool const registered = register_command({"create", "create [--template T] [--timeout S] [--label k=v]...",
                                          "create a sandbox (default template base, 300 s) and print its id", run});

}  // namespace
}  // namespace prism_e2b::cli
