// coroutine_client: every do_x runs its coroutine through the one bridge, spawn_op.
#include <prism_e2b/e2b/coroutine_client.hpp>

#include "core/spawn_op.hpp"

#include <utility>

namespace prism_e2b::e2b {

coroutine_client::coroutine_client(boost::asio::any_io_executor executor) : ex_(std::move(executor)) {}

coroutine_client::~coroutine_client() = default;

void coroutine_client::do_create_sandbox(create_sandbox_params params, completion_handler<sandbox_handle> h)
{
    prism_e2b::detail::spawn_op(ex_, create_sandbox(std::move(params)), std::move(h));
}

void coroutine_client::do_connect_sandbox(std::string sandbox_id, std::chrono::seconds timeout,
                                          completion_handler<connect_result> h)
{
    prism_e2b::detail::spawn_op(ex_, connect_sandbox(std::move(sandbox_id), timeout), std::move(h));
}

void coroutine_client::do_pause_sandbox(std::string sandbox_id, bool memory, completion_handler<pause_reply> h)
{
    prism_e2b::detail::spawn_op(ex_, pause_sandbox(std::move(sandbox_id), memory), std::move(h));
}

void coroutine_client::do_kill_sandbox(std::string sandbox_id, completion_handler<bool> h)
{
    prism_e2b::detail::spawn_op(ex_, kill_sandbox(std::move(sandbox_id)), std::move(h));
}

void coroutine_client::do_get_sandbox_info(std::string sandbox_id, completion_handler<sandbox_info> h)
{
    prism_e2b::detail::spawn_op(ex_, get_sandbox_info(std::move(sandbox_id)), std::move(h));
}

void coroutine_client::do_list_sandboxes(list_params params, completion_handler<sandbox_page> h)
{
    prism_e2b::detail::spawn_op(ex_, list_sandboxes(std::move(params)), std::move(h));
}

void coroutine_client::do_set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds timeout,
                                              completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(ex_, set_sandbox_timeout(std::move(sandbox_id), timeout), std::move(h));
}

void coroutine_client::do_start_process(envd_target target, start_process_params params,
                                        completion_handler<std::unique_ptr<process_event_stream>> h)
{
    prism_e2b::detail::spawn_op(ex_, start_process(std::move(target), std::move(params)), std::move(h));
}

void coroutine_client::do_connect_process(envd_target target, process_selector selector,
                                          std::chrono::milliseconds timeout,
                                          completion_handler<std::unique_ptr<process_event_stream>> h)
{
    prism_e2b::detail::spawn_op(ex_, connect_process(std::move(target), std::move(selector), timeout), std::move(h));
}

void coroutine_client::do_list_processes(envd_target target, completion_handler<std::vector<process_info>> h)
{
    prism_e2b::detail::spawn_op(ex_, list_processes(std::move(target)), std::move(h));
}

void coroutine_client::do_send_stdin(envd_target target, process_selector selector, std::string bytes,
                                     completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(ex_, send_stdin(std::move(target), std::move(selector), std::move(bytes)),
                                std::move(h));
}

void coroutine_client::do_close_stdin(envd_target target, process_selector selector, completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(ex_, close_stdin(std::move(target), std::move(selector)), std::move(h));
}

void coroutine_client::do_send_signal(envd_target target, process_selector selector, process_signal sig,
                                      completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(ex_, send_signal(std::move(target), std::move(selector), sig), std::move(h));
}

void coroutine_client::do_read_file(envd_target target, std::string path, completion_handler<std::string> h)
{
    prism_e2b::detail::spawn_op(ex_, read_file(std::move(target), std::move(path)), std::move(h));
}

void coroutine_client::do_write_file(envd_target target, std::string path, std::string data,
                                     completion_handler<entry_info> h)
{
    prism_e2b::detail::spawn_op(ex_, write_file(std::move(target), std::move(path), std::move(data)), std::move(h));
}

void coroutine_client::do_make_dir(envd_target target, std::string path, completion_handler<bool> h)
{
    prism_e2b::detail::spawn_op(ex_, make_dir(std::move(target), std::move(path)), std::move(h));
}

void coroutine_client::do_stat(envd_target target, std::string path, completion_handler<entry_info> h)
{
    prism_e2b::detail::spawn_op(ex_, stat(std::move(target), std::move(path)), std::move(h));
}

void coroutine_client::do_list_dir(envd_target target, std::string path, std::uint32_t depth,
                                   completion_handler<std::vector<entry_info>> h)
{
    prism_e2b::detail::spawn_op(ex_, list_dir(std::move(target), std::move(path), depth), std::move(h));
}

void coroutine_client::do_move(envd_target target, std::string source, std::string destination,
                               completion_handler<entry_info> h)
{
    prism_e2b::detail::spawn_op(ex_, move(std::move(target), std::move(source), std::move(destination)), std::move(h));
}

void coroutine_client::do_remove(envd_target target, std::string path, completion_handler<void> h)
{
    prism_e2b::detail::spawn_op(ex_, remove(std::move(target), std::move(path)), std::move(h));
}

void coroutine_client::do_health(envd_target target, completion_handler<bool> h)
{
    prism_e2b::detail::spawn_op(ex_, health(std::move(target)), std::move(h));
}

}  // namespace prism_e2b::e2b
