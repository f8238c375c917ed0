// Blocking "eventually": polls a predicate until it holds or a deadline passes.
// For tests that wait on another process or thread reaching a state (never a
// fixed sleep standing in for synchronisation).
#ifndef PRISM_E2B_TESTS_COMMON_WAIT_UNTIL_HPP
#define PRISM_E2B_TESTS_COMMON_WAIT_UNTIL_HPP

#include <chrono>
#include <thread>

namespace prism_e2b::test {

/// True as soon as `pred()` is; false when `within` passed first.
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds within = std::chrono::seconds(30))
{
    auto const deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
        if (pred()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace prism_e2b::test

#endif
