// The real client (make_client) aimed at a local_server_fixture: its options,
// a client, and e2b_sandbox_options (with no retries) for the adapter.
#ifndef PRISM_E2B_TESTS_COMMON_SANDBOX_OPTIONS_HPP
#define PRISM_E2B_TESTS_COMMON_SANDBOX_OPTIONS_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>

#include "local_server_fixture.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/test/unit_test.hpp>

#include <memory>

namespace prism_e2b::test {

/// What reaches the fixture's server: its API key and its two URLs.
inline e2b::client_options client_options_for(local_server_fixture const& f)
{
    e2b::client_options o;
    o.api_key = f.api_key();
    o.api_url = f.api_url();
    o.sandbox_url = f.sandbox_url();
    return o;
}

/// A real client of the fixture's server; the test stops here when none can be made.
inline std::shared_ptr<e2b::client> client_for(local_server_fixture const& f, boost::asio::any_io_executor ex)
{
    auto c = e2b::make_client(std::move(ex), client_options_for(f));
    BOOST_TEST_REQUIRE(c.has_value(), (c ? "" : c.error().to_string()));
    return *c;
}

inline e2b_sandbox_options server_options(local_server_fixture& f)
{
    e2b_sandbox_options o;
    o.api_key = f.api_key();
    o.client_options = client_options_for(f);
    o.client_options.max_retries = 0;
    return o;
}

}  // namespace prism_e2b::test

#endif
