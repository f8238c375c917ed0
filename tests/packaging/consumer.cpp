// A program built against the installed package only (find_package or
// pkg-config): the version header, limits validation, the redactor, the error
// type, a coroutine on the library's exec_governor (Asio across the library
// boundary), and the universal async model across it (use_future and a plain
// callback through any_completion_handler into compiled code). Built with g++
// and with clang++ against the same installed library, with no macro.
#include <prism_e2b/prism_e2b.hpp>
#include <prism_e2b/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#if defined(BOOST_ASIO_SEPARATE_COMPILATION) || defined(BOOST_BEAST_SEPARATE_COMPILATION)
#error "the installed package must not force Asio/Beast separate compilation on its consumers"
#endif

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
    // Neither an api_key nor a client: refused before any vendor call, so no network.
    auto fut = prism_e2b::async_create_e2b_sandbox(ctx.get_executor(), prism_e2b::e2b_sandbox_options{},
                                                   boost::asio::use_future);
    int callbacks = 0;
    prism_e2b::async_create_e2b_sandbox(ctx.get_executor(), prism_e2b::e2b_sandbox_options{},
                                        [&](prism_e2b::result<std::shared_ptr<prism_e2b::e2b_sandbox>> r) {
                                            if (!r && r.error() == prism_e2b::errc::invalid_argument) ++callbacks;
                                        });
    ctx.restart();
    ctx.run();
    auto created = fut.get();
    if (created || created.error() != prism_e2b::errc::invalid_argument || callbacks != 1) {
        std::cerr << "the async model did not complete as documented across the library boundary\n";
        return 1;
    }
    std::cout << "installed prism_e2b " << PRISM_E2B_VERSION_STRING << " works: " << r.error().to_string() << "\n";
    return 0;
}
