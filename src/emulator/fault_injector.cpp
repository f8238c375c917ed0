// The public face of the server's fault switches (fault_switches.hpp).
#include <prism_e2b/local_server.hpp>

#include "emulator/fault_switches.hpp"

namespace prism_e2b::local {

fault_injector::fault_injector(detail::fault_switches& switches) noexcept : switches_(&switches) {}

void fault_injector::fail_next_pauses(unsigned count) { switches_->fail_next_pauses(count); }

void fault_injector::throttle_next_creates(unsigned count, std::chrono::seconds retry_after)
{
    switches_->throttle_next_creates(count, retry_after);
}

void fault_injector::add_latency(std::string route_prefix, std::chrono::milliseconds delay)
{
    switches_->add_latency(std::move(route_prefix), delay);
}

void fault_injector::cut_next_streams(std::size_t after_bytes, unsigned count)
{
    switches_->cut_next_streams(after_bytes, count);
}

void fault_injector::kill_sandbox_during_exec(std::string sandbox_id, std::chrono::milliseconds after)
{
    switches_->kill_sandbox_during_exec(std::move(sandbox_id), after);
}

void fault_injector::reset() { switches_->reset(); }

}  // namespace prism_e2b::local
