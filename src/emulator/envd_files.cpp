// envd plain-HTTP /files (download, multipart and octet-stream upload) and
// filesystem.Filesystem unary RPCs, confined to the sandbox root.
#include "emulator/server_state.hpp"

namespace prism_e2b::local::detail {

namespace asio = boost::asio;

asio::awaitable<void> handle_files(std::shared_ptr<server_state>, std::shared_ptr<sandbox>, http_request, response_sink& sink)
{
    co_await sink.send(rest_error(501, "not implemented yet"));
}

asio::awaitable<void> handle_filesystem_rpc(std::shared_ptr<server_state>, std::shared_ptr<sandbox>, http_request, response_sink& sink)
{
    co_await sink.send(connect_error("unimplemented", "not implemented yet"));
}

}  // namespace prism_e2b::local::detail
