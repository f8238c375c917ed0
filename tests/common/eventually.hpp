// Waits for a state instead of sleeping a fixed time: polls `pred` until it
// holds or `deadline` passes (then returns false, so the test fails).
#ifndef PRISM_E2B_TESTS_COMMON_EVENTUALLY_HPP
#define PRISM_E2B_TESTS_COMMON_EVENTUALLY_HPP

#include <chrono>
#include <thread>

namespace prism_e2b::test {

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds deadline = std::chrono::seconds(20))
{
    auto const until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        if (pred()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace prism_e2b::test

#endif
