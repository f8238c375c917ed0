#include "wire/exchange.hpp"

namespace prism_e2b::wire {

call_options::clock::time_point call_options::attempt_deadline() const noexcept
{
    if (attempt_timeout.count() <= 0) return deadline;
    auto const now = clock::now();
    // Saturating: a deadline of max() must not overflow.
    if (deadline - now <= attempt_timeout) return deadline;
    return now + attempt_timeout;
}

}  // namespace prism_e2b::wire
