// The parts of a request target the routes read: the query string and the
// sandbox id of a /sandboxes/<id>/... path.
#ifndef PRISM_E2B_EMULATOR_ROUTE_PATHS_HPP
#define PRISM_E2B_EMULATOR_ROUTE_PATHS_HPP

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prism_e2b::local::detail {

/// Parses "a=1&b=2" into decoded pairs.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view q);
/// "/sandboxes/<id><suffix>" -> <id> (one path segment); nullopt for any other path.
std::optional<std::string> sandbox_route_id(std::string_view path, std::string_view suffix);

}  // namespace prism_e2b::local::detail

#endif
