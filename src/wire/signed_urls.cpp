// client_impl's get_host(port) and signed /files URLs, built as the official
// SDK builds them (sandbox.getHost, uploadUrl / downloadUrl, signature.ts):
//   host:      "<port>-<sandbox id>.<domain>"
//   file URL:  <envd direct origin>/files?username=..&path=..&signature=v1_..[&signature_expiration=..]
//   signature: protocol/file_url_signature.hpp
// with the query serialised as URLSearchParams does (form encoding).
#include <prism_e2b/redactor.hpp>

#include "protocol/file_url_signature.hpp"
#include "wire/client_impl.hpp"
#include "wire/rest_json.hpp"

namespace prism_e2b::wire {

result<std::string> client_impl::do_get_host(e2b::envd_target const& target, std::uint16_t port) const
{
    if (auto o = envd_origin(target); !o) return o.error();  // validates the id as a host label
    auto const& domain = target.domain && !target.domain->empty() ? *target.domain : opts_.domain;
    return std::to_string(port) + "-" + target.sandbox_id + "." + domain;
}

result<std::string> client_impl::do_file_url(e2b::envd_target const& target, std::string const& path,
                                             e2b::file_url_options const& options) const
{
    if (auto o = envd_origin(target); !o) return o.error();
    bool const signed_url = target.access_token && !target.access_token->empty();
    if (!signed_url && options.expires_in)
        return error(errc::invalid_argument, "a signature expiration needs a sandbox created as secure",
                     {"file url", 0, {}});
    // The SDK's envdDirectUrl: the configured sandbox URL, else the sandbox's own host.
    std::string base;
    if (opts_.sandbox_url) {
        auto o = parse_origin(*opts_.sandbox_url);
        if (!o) return o.error();
        base = (o->tls ? "https://" : "http://") + o->host_header();
    } else {
        auto host = do_get_host(target, static_cast<std::uint16_t>(std::stoi(std::string(envd_port))));
        if (!host) return host.error();
        base = "https://" + *host;
    }
    std::string url = base + "/files";
    char sep = '?';
    auto add = [&](char const* name, std::string_view value) {
        url += sep;
        url += name;
        url += '=';
        url += rest::form_urlencode(value);
        sep = '&';
    };
    std::string const user = options.user.value_or("");
    if (!user.empty()) add("username", user);
    if (!path.empty()) add("path", path);
    if (signed_url) {
        std::optional<std::int64_t> expires;
        if (options.expires_in) {
            auto const now =
                std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
            expires = (now + *options.expires_in).count();
        }
        char const* op = options.operation == e2b::file_operation::write ? "write" : "read";
        add("signature", detail::file_url_signature(path, op, user, *target.access_token, expires));
        if (expires) add("signature_expiration", std::to_string(*expires));
    }
    return url;
}

}  // namespace prism_e2b::wire
