#include <prism_e2b/error.hpp>
#include <prism_e2b/redactor.hpp>

#include <boost/asio/error.hpp>

namespace prism_e2b {
namespace {

class category final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "prism_e2b"; }

    std::string message(int ev) const override
    {
        switch (static_cast<errc>(ev)) {
            case errc::invalid_argument:
                return "invalid argument";
            case errc::limit_exceeded:
                return "limit exceeded";
            case errc::paused:
                return "sandbox is paused";
            case errc::not_found:
                return "not found";
            case errc::unauthenticated:
                return "unauthenticated";
            case errc::permission_denied:
                return "permission denied";
            case errc::rate_limited:
                return "rate limited";
            case errc::service_busy:
                return "service busy";
            case errc::conflict:
                return "conflict";
            case errc::already_exists:
                return "already exists";
            case errc::wrong_owner:
                return "wrong owner";
            case errc::unsupported:
                return "unsupported";
            case errc::protocol_error:
                return "protocol error";
            case errc::unknown_outcome:
                return "unknown outcome";
            case errc::timed_out:
                return "timed out";
            case errc::cancelled:
                return "cancelled";
            case errc::server_error:
                return "server error";
        }
        return "unknown prism_e2b error " + std::to_string(ev);
    }
};

}  // namespace

boost::system::error_category const& error_category() noexcept
{
    static category const instance;
    return instance;
}

bool is_retryable(boost::system::error_code const& ec) noexcept
{
    if (ec.category() == error_category()) {
        switch (static_cast<errc>(ec.value())) {
            case errc::rate_limited:
            case errc::service_busy:
            case errc::timed_out:
            case errc::server_error:
                return true;
            default:
                return false;
        }
    }
    namespace ae = boost::asio::error;
    return ec == ae::connection_reset || ec == ae::connection_refused || ec == ae::connection_aborted ||
           ec == ae::broken_pipe || ec == ae::timed_out || ec == ae::host_unreachable ||
           ec == ae::network_unreachable || ec == ae::try_again;
}

error::error(boost::system::error_code code, std::string_view message, error_details details)
    : code_(code), message_(secret_redactor::global().redact(message)), details_(std::move(details))
{
    auto const& r = secret_redactor::global();
    details_.operation = r.redact(details_.operation);
    details_.vendor_code = r.redact(details_.vendor_code);
}

std::string error::to_string() const
{
    std::string out;
    if (!details_.operation.empty()) out += details_.operation + ": ";
    out += message_.empty() ? code_.message() : message_;
    out += " [" + code_.message();
    if (details_.http_status != 0) out += ", HTTP " + std::to_string(details_.http_status);
    if (!details_.vendor_code.empty()) out += ", " + details_.vendor_code;
    out += "]";
    // Secrets registered after this error was built are caught here too.
    return secret_redactor::global().redact(out);
}

exception::exception(error err) : boost::system::system_error(err.code(), err.to_string()), err_(std::move(err)) {}

void throw_exception_from_error(error const& e, boost::source_location const&) { throw exception(e); }

}  // namespace prism_e2b
