// A program built against the installed package only (find_package or
// pkg-config): the version header, limits validation, the redactor, the error
// type, and a coroutine on the library's exec_governor (Asio across the
// library boundary).
#include <prism_e2b/prism_e2b.hpp>
#include <prism_e2b/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>
#include <string>

int main()
{
#ifdef PRISM_E2B_EXPECTED_VERSION
    if (std::string(PRISM_E2B_VERSION_STRING) != PRISM_E2B_EXPECTED_VERSION) {
        std::cerr << "version.hpp says " << PRISM_E2B_VERSION_STRING << ", expected " << PRISM_E2B_EXPECTED_VERSION
                  << "\n";
        return 1;
    }
#endif
    prism_e2b::sandbox_limits limits;
    limits.max_concurrent_execs = 9;  // above the hard cap of 8
    auto r = limits.validate();
    if (r.has_value()) {
        std::cerr << "an out-of-range limit was accepted\n";
        return 1;
    }
    prism_e2b::secret_redactor::global().add("consumer-secret-123");
    prism_e2b::error e(prism_e2b::errc::unauthenticated, "key consumer-secret-123 refused");
    if (e.to_string().find("consumer-secret-123") != std::string::npos) {
        std::cerr << "secret leaked\n";
        return 1;
    }

    boost::asio::io_context ctx;
    prism_e2b::exec_governor governor{prism_e2b::sandbox_limits{}};
    bool admitted = false;
    boost::asio::co_spawn(
        ctx,
        [&]() -> boost::asio::awaitable<void> {
            auto permit = co_await governor.acquire();
            admitted = permit.has_value() && governor.in_flight() == 1;
        },
        boost::asio::detached);
    ctx.run();
    if (!admitted) {
        std::cerr << "the governor did not admit a command\n";
        return 1;
    }
    std::cout << "installed prism_e2b " << PRISM_E2B_VERSION_STRING << " works: " << r.error().to_string() << "\n";
    return 0;
}
