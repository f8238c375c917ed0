// The engines by name (engine_factory.hpp).
#include "emulator/engines/engine_factory.hpp"

#include "emulator/engines/gvisor/gvisor_engine.hpp"
#include "emulator/engines/in_sandbox/in_sandbox_engine.hpp"
#include "emulator/engines/mount_namespace/mount_namespace_engine.hpp"
#include "emulator/engines/namespaces/namespaces_engine.hpp"
#include "emulator/engines/none/none_engine.hpp"

#include <array>
#include <string_view>

namespace prism_e2b::local::detail {

namespace {

using engine_result = result<std::unique_ptr<isolation_engine>>;

struct known_engine {
    std::string_view name;
    engine_result (*start)(engine_request const&);
};

// One line per engine; the first is the default.
constexpr std::array<known_engine, 4> engines = {{
    {"namespaces", [](engine_request const& r) { return start_namespaces_engine(r.state_dir / "probe-ns", r.owner); }},
    {"gvisor", [](engine_request const& r) { return start_gvisor_engine(r.state_dir, r.owner, r.memory_tiers); }},
    {"mount-namespace", [](engine_request const& r) { return start_mount_namespace_engine(r.state_dir / "probe"); }},
    {"none", [](engine_request const&) { return engine_result(make_none_engine()); }},
}};

}  // namespace

result<std::unique_ptr<isolation_engine>> start_isolation_engine(engine_request const& req)
{
    known_engine const* wanted = nullptr;
    std::string names;
    for (auto const& e : engines) {
        if (e.name == req.wanted) wanted = &e;
        names += (names.empty() ? "" : ", ") + std::string(e.name);
    }
    if (!req.wanted.empty() && !wanted)
        return error(errc::invalid_argument, "unknown engine \"" + req.wanted + "\" (" + names + ")", {"start"});
    // Chosen explicitly or not at all: never a weaker engine than the default behind the operator's back.
    if (!req.isolate) return make_none_engine();
    if (wanted) return wanted->start(req);
    auto engine = engines.front().start(req);
    if (!engine)
        return error(errc::unsupported,
                     engine.error().message() +
                         "; to run sandboxes with weaker isolation, name the engine (--engine mount-namespace or "
                         "--engine none; server_options::engine)",
                     {"start"});
    return engine;
}

std::unique_ptr<isolation_engine> engine_inside_sandbox() { return make_in_sandbox_engine(); }

}  // namespace prism_e2b::local::detail
