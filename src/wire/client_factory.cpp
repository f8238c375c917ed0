// Configuration like the official SDK (E2B_* variables) and make_client().
#include <prism_e2b/redactor.hpp>

#include "wire/client_impl.hpp"

#include <cstdlib>

namespace prism_e2b::e2b {
namespace {

std::optional<std::string> env(char const* name)
{
    char const* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

}  // namespace

result<resolved_client_options> resolve_client_options(client_options options)
{
    resolved_client_options r;
    auto key = options.api_key ? options.api_key : env("E2B_API_KEY");
    if (!key || key->empty())
        return error(errc::invalid_argument, "no E2B API key: set E2B_API_KEY or client_options::api_key",
                     {"configure client", 0, {}});
    secret_redactor::global().add(*key);
    r.api_key = *key;
    r.domain = options.domain ? *options.domain : env("E2B_DOMAIN").value_or("e2b.app");
    if (r.domain.empty()) return error(errc::invalid_argument, "empty E2B domain", {"configure client", 0, {}});
    r.api_url = options.api_url ? *options.api_url : env("E2B_API_URL").value_or("https://api." + r.domain);
    if (auto o = wire::parse_origin(r.api_url); !o)
        return error(errc::invalid_argument, "E2B API URL: " + o.error().message(), {"configure client", 0, {}});
    r.sandbox_url = options.sandbox_url ? options.sandbox_url : env("E2B_SANDBOX_URL");
    if (r.sandbox_url) {
        if (auto o = wire::parse_origin(*r.sandbox_url); !o)
            return error(errc::invalid_argument, "E2B sandbox URL: " + o.error().message(),
                         {"configure client", 0, {}});
    }
    r.raw = std::move(options);
    return r;
}

result<std::shared_ptr<client>> make_client(boost::asio::any_io_executor executor, client_options options)
{
    auto resolved = resolve_client_options(std::move(options));
    if (!resolved) return resolved.error();
    auto api = wire::parse_origin(resolved->api_url);
    if (!api) return api.error();
    std::optional<wire::origin> sandbox;
    if (resolved->sandbox_url) {
        auto s = wire::parse_origin(*resolved->sandbox_url);
        if (!s) return s.error();
        sandbox = std::move(*s);
    }
    wire::transport_options t;
    t.connect_timeout = resolved->raw.connect_timeout;
    t.header_timeout = resolved->raw.header_timeout;
    t.read_idle_timeout = resolved->raw.read_idle_timeout;
    t.max_response_bytes = resolved->raw.max_response_bytes;
    t.accept_gzip = resolved->raw.accept_gzip;
    t.max_connections_per_origin = resolved->raw.max_connections_per_origin;
    t.pool_idle_timeout = resolved->raw.pool_idle_timeout;
    t.ca_file = resolved->raw.ca_file;
    t.logger = resolved->raw.logger;
    t.http2 = resolved->raw.http2;
    t.h2c_prior_knowledge = resolved->raw.h2c_prior_knowledge;
    t.max_streams_per_connection = resolved->raw.max_streams_per_connection;
    auto transport = wire::make_transport(executor, std::move(t));
    if (!transport) return transport.error();
    return std::shared_ptr<client>(std::make_shared<wire::client_impl>(
        std::move(executor), std::move(*resolved), std::move(*transport), std::move(*api), std::move(sandbox)));
}

}  // namespace prism_e2b::e2b
