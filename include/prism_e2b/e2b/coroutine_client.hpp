// A base for e2b::client implementations written as coroutines.
#ifndef PRISM_E2B_E2B_COROUTINE_CLIENT_HPP
#define PRISM_E2B_E2B_COROUTINE_CLIENT_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/export.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace prism_e2b::e2b {

/// An e2b::client whose operations are coroutines: derive, implement the
/// awaitable members (one per async_x of client, same arguments), and every
/// completion token works. Each do_x co_spawns its coroutine on `executor`,
/// passes the caller's cancellation slot to it (so `this_coro::cancellation_state`
/// sees a cancellation bound to the token) and completes the handler on its
/// associated executor; an exception escaping a coroutine completes it with
/// errc::server_error. The real client (make_client()), the test fakes and a
/// host's own injected clients are built this way.
///
/// Thread safety: the coroutines of concurrent operations may run at once on a
/// multi-threaded executor; the implementation guards its own state.
/// Lifetimes: the object must outlive the coroutines it starts.
class PRISM_E2B_API coroutine_client : public client {
public:
    /// The coroutines run on `executor`.
    explicit coroutine_client(boost::asio::any_io_executor executor);
    ~coroutine_client() override;

    /// The executor the coroutines run on.
    boost::asio::any_io_executor const& get_executor() const noexcept { return ex_; }

protected:
    virtual boost::asio::awaitable<result<sandbox_handle>> create_sandbox(
        create_sandbox_params params) = 0;  ///< the coroutine of async_create_sandbox
    virtual boost::asio::awaitable<result<connect_result>> connect_sandbox(
        std::string sandbox_id, std::chrono::seconds timeout) = 0;  ///< the coroutine of async_connect_sandbox
    virtual boost::asio::awaitable<result<pause_reply>> pause_sandbox(
        std::string sandbox_id, bool memory) = 0;  ///< the coroutine of async_pause_sandbox
    virtual boost::asio::awaitable<result<bool>> kill_sandbox(
        std::string sandbox_id) = 0;  ///< the coroutine of async_kill_sandbox
    virtual boost::asio::awaitable<result<sandbox_info>> get_sandbox_info(
        std::string sandbox_id) = 0;  ///< the coroutine of async_get_sandbox_info
    virtual boost::asio::awaitable<result<sandbox_page>> list_sandboxes(
        list_params params) = 0;  ///< the coroutine of async_list_sandboxes
    virtual boost::asio::awaitable<result<void>> set_sandbox_timeout(
        std::string sandbox_id, std::chrono::seconds timeout) = 0;  ///< the coroutine of async_set_sandbox_timeout
    virtual boost::asio::awaitable<result<std::unique_ptr<process_event_stream>>> start_process(
        envd_target target, start_process_params params) = 0;  ///< the coroutine of async_start_process
    virtual boost::asio::awaitable<result<std::unique_ptr<process_event_stream>>> connect_process(
        envd_target target, process_selector selector,
        std::chrono::milliseconds timeout) = 0;  ///< the coroutine of async_connect_process
    virtual boost::asio::awaitable<result<std::vector<process_info>>> list_processes(
        envd_target target) = 0;  ///< the coroutine of async_list_processes
    virtual boost::asio::awaitable<result<void>> send_stdin(
        envd_target target, process_selector selector, std::string bytes) = 0;  ///< the coroutine of async_send_stdin
    virtual boost::asio::awaitable<result<void>> close_stdin(
        envd_target target, process_selector selector) = 0;  ///< the coroutine of async_close_stdin
    virtual boost::asio::awaitable<result<void>> send_signal(
        envd_target target, process_selector selector, process_signal sig) = 0;  ///< the coroutine of async_send_signal
    virtual boost::asio::awaitable<result<std::string>> read_file(
        envd_target target, std::string path) = 0;  ///< the coroutine of async_read_file
    virtual boost::asio::awaitable<result<entry_info>> write_file(
        envd_target target, std::string path, std::string data) = 0;  ///< the coroutine of async_write_file
    virtual boost::asio::awaitable<result<bool>> make_dir(envd_target target,
                                                          std::string path) = 0;  ///< the coroutine of async_make_dir
    virtual boost::asio::awaitable<result<entry_info>> stat(envd_target target,
                                                            std::string path) = 0;  ///< the coroutine of async_stat
    virtual boost::asio::awaitable<result<std::vector<entry_info>>> list_dir(
        envd_target target, std::string path, std::uint32_t depth) = 0;  ///< the coroutine of async_list_dir
    virtual boost::asio::awaitable<result<entry_info>> move(
        envd_target target, std::string source, std::string destination) = 0;  ///< the coroutine of async_move
    virtual boost::asio::awaitable<result<void>> remove(envd_target target,
                                                        std::string path) = 0;    ///< the coroutine of async_remove
    virtual boost::asio::awaitable<result<bool>> health(envd_target target) = 0;  ///< the coroutine of async_health

    // Each runs the coroutine above on get_executor() and completes `h` with its result.
    void do_create_sandbox(create_sandbox_params params,
                           completion_handler<sandbox_handle> h) final;  ///< runs create_sandbox() on the executor
    void do_connect_sandbox(std::string sandbox_id, std::chrono::seconds timeout,
                            completion_handler<connect_result> h) final;  ///< runs connect_sandbox() on the executor
    void do_pause_sandbox(std::string sandbox_id, bool memory,
                          completion_handler<pause_reply> h) final;  ///< runs pause_sandbox() on the executor
    void do_kill_sandbox(std::string sandbox_id,
                         completion_handler<bool> h) final;  ///< runs kill_sandbox() on the executor
    void do_get_sandbox_info(std::string sandbox_id,
                             completion_handler<sandbox_info> h) final;  ///< runs get_sandbox_info() on the executor
    void do_list_sandboxes(list_params params,
                           completion_handler<sandbox_page> h) final;  ///< runs list_sandboxes() on the executor
    void do_set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds timeout,
                                completion_handler<void> h) final;  ///< runs set_sandbox_timeout() on the executor
    void do_start_process(
        envd_target target, start_process_params params,
        completion_handler<std::unique_ptr<process_event_stream>> h) final;  ///< runs start_process() on the executor
    void do_connect_process(
        envd_target target, process_selector selector, std::chrono::milliseconds timeout,
        completion_handler<std::unique_ptr<process_event_stream>> h) final;  ///< runs connect_process() on the executor
    void do_list_processes(envd_target target, completion_handler<std::vector<process_info>> h)
        final;  ///< runs list_processes() on the executor
    void do_send_stdin(envd_target target, process_selector selector, std::string bytes,
                       completion_handler<void> h) final;  ///< runs send_stdin() on the executor
    void do_close_stdin(envd_target target, process_selector selector,
                        completion_handler<void> h) final;  ///< runs close_stdin() on the executor
    void do_send_signal(envd_target target, process_selector selector, process_signal sig,
                        completion_handler<void> h) final;  ///< runs send_signal() on the executor
    void do_read_file(envd_target target, std::string path,
                      completion_handler<std::string> h) final;  ///< runs read_file() on the executor
    void do_write_file(envd_target target, std::string path, std::string data,
                       completion_handler<entry_info> h) final;  ///< runs write_file() on the executor
    void do_make_dir(envd_target target, std::string path,
                     completion_handler<bool> h) final;  ///< runs make_dir() on the executor
    void do_stat(envd_target target, std::string path,
                 completion_handler<entry_info> h) final;  ///< runs stat() on the executor
    void do_list_dir(envd_target target, std::string path, std::uint32_t depth,
                     completion_handler<std::vector<entry_info>> h) final;  ///< runs list_dir() on the executor
    void do_move(envd_target target, std::string source, std::string destination,
                 completion_handler<entry_info> h) final;  ///< runs move() on the executor
    void do_remove(envd_target target, std::string path,
                   completion_handler<void> h) final;                      ///< runs remove() on the executor
    void do_health(envd_target target, completion_handler<bool> h) final;  ///< runs health() on the executor

private:
    boost::asio::any_io_executor ex_;
};

}  // namespace prism_e2b::e2b

#endif
