#include "wire/transport_log.hpp"

namespace prism_e2b::wire {

void log_exchange(log_sink const& sink, std::string const& method, origin const& o, std::string const& target,
                  int status, std::chrono::steady_clock::time_point start, std::string_view extra)
{
    if (!sink) return;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    std::string line = method + " " + o.key() + path_of(o.base_path + target) + " " +
                       (status ? std::to_string(status) : std::string("-")) + " " + std::to_string(ms.count()) + "ms";
    if (!extra.empty()) {
        line += " ";
        line += extra;
    }
    log_redacted(sink, status >= 400 || status == 0 ? log_level::warning : log_level::info, line);
}

}  // namespace prism_e2b::wire
