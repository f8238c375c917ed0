// The `none` engine (none_engine.hpp): isolation_engine's defaults, nothing more.
#include "emulator/engines/none/none_engine.hpp"

namespace prism_e2b::local::detail {

namespace {

class none_engine final : public isolation_engine {
public:
    std::string_view name() const noexcept override { return "none"; }
    sandbox_capabilities capabilities(bool) const override
    {
        sandbox_capabilities c;
        c.workspace_coherent = true;
        return c;
    }
};

}  // namespace

std::unique_ptr<isolation_engine> make_none_engine() { return std::make_unique<none_engine>(); }

}  // namespace prism_e2b::local::detail
