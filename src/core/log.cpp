#include <prism_e2b/log.hpp>
#include <prism_e2b/redactor.hpp>

namespace prism_e2b {

void log_redacted(log_sink const& sink, log_level level, std::string_view line)
{
    if (sink) sink(level, secret_redactor::global().redact(line));
}

}  // namespace prism_e2b
