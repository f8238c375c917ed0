// Shared set-up of the examples: where the sandboxes come from, and one main
// that runs co_main on an io_context (boostorg/redis example/main.cpp style).
//
// With E2B_API_KEY set, the examples talk to E2B (E2B_API_URL / E2B_SANDBOX_URL /
// E2B_DOMAIN are honoured, as by the official SDK). Without it they embed
// prism-e2b-local in-process on a loopback port: real processes on this machine.
#ifndef PRISM_E2B_EXAMPLES_COMMON_EXAMPLE_MAIN_HPP
#define PRISM_E2B_EXAMPLES_COMMON_EXAMPLE_MAIN_HPP

#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/local_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <thread>

namespace example {

namespace asio = boost::asio;

/// Where the examples' sandboxes live: the credentials and endpoints a host
/// would pass to create_e2b_sandbox / connect_e2b_sandbox.
struct environment {
    std::string api_key;                            ///< secret: never printed
    prism_e2b::e2b::client_options client_options;  ///< endpoints (empty: E2B defaults / env)
    prism_e2b::local::server* local = nullptr;      ///< the embedded server, when there is one

    prism_e2b::e2b_sandbox_options sandbox_options() const
    {
        prism_e2b::e2b_sandbox_options o;
        o.api_key = api_key;
        o.client_options = client_options;
        return o;
    }
    prism_e2b::e2b_connect_options connect_options(std::string sandbox_id) const
    {
        prism_e2b::e2b_connect_options o;
        o.api_key = api_key;
        o.client_options = client_options;
        o.sandbox_id = std::move(sandbox_id);
        return o;
    }
};

/// Fails the example: prints and returns 1.
inline int fail(std::string const& what)
{
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    return 1;
}

/// The embedded server runs on its own io_context and thread, like a remote
/// vendor: examples may drop and rebuild their own io_context meanwhile.
class embedded_server {
public:
    embedded_server() : work_(asio::make_work_guard(ioc_))
    {
        std::random_device rd;
        prism_e2b::local::server_options so;
        so.api_key = "e2b_example_" + std::to_string(rd()) + std::to_string(rd());
        api_key_ = so.api_key;
        server_ = std::make_unique<prism_e2b::local::server>(ioc_.get_executor(), so);
        if (auto r = server_->start(); !r) throw std::runtime_error("local server: " + r.error().to_string());
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~embedded_server()
    {
        server_->stop();
        work_.reset();
        ioc_.stop();
        thread_.join();
    }
    prism_e2b::local::server& server() { return *server_; }
    std::string const& api_key() const { return api_key_; }

private:
    asio::io_context ioc_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::unique_ptr<prism_e2b::local::server> server_;
    std::string api_key_;
    std::thread thread_;
};

/// Runs `co_main(env)` to completion on a fresh one-thread io_context.
template <class CoMain>
int run_on_io_context(CoMain co_main, environment const& env)
{
    asio::io_context ioc(1);
    auto fut = asio::co_spawn(ioc, co_main(env), asio::use_future);
    ioc.run();
    try {
        return fut.get();
    } catch (std::exception const& e) {
        return fail(std::string("exception: ") + e.what());
    }
}

/// main() of every example: picks the environment, then runs co_main.
template <class CoMain>
int main(CoMain co_main)
{
    environment env;
    std::unique_ptr<embedded_server> embedded;
    if (char const* key = std::getenv("E2B_API_KEY"); key && *key) {
        env.api_key = key;
        std::printf("using E2B at %s\n",
                    std::getenv("E2B_API_URL") ? std::getenv("E2B_API_URL") : "the default domain");
    } else {
        try {
            embedded = std::make_unique<embedded_server>();
        } catch (std::exception const& e) {
            return fail(e.what());
        }
        env.api_key = embedded->api_key();
        env.client_options.api_url = embedded->server().api_url();
        env.client_options.sandbox_url = embedded->server().sandbox_url();
        env.local = &embedded->server();
        std::printf("using the embedded local server at %s\n", embedded->server().api_url().c_str());
    }
    return run_on_io_context(co_main, env);
}

}  // namespace example

#endif
