// e2b_sandbox_options aimed at a local_server_fixture: the real client
// (make_client) against the in-process server, with no retries.
#ifndef PRISM_E2B_TESTS_COMMON_SANDBOX_OPTIONS_HPP
#define PRISM_E2B_TESTS_COMMON_SANDBOX_OPTIONS_HPP

#include <prism_e2b/e2b_sandbox.hpp>

#include "local_server_fixture.hpp"

namespace prism_e2b::test {

inline e2b_sandbox_options server_options(local_server_fixture& f)
{
    e2b_sandbox_options o;
    o.api_key = f.api_key();
    o.client_options.api_url = f.api_url();
    o.client_options.sandbox_url = f.sandbox_url();
    o.client_options.max_retries = 0;
    return o;
}

}  // namespace prism_e2b::test

#endif
