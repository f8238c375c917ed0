// The attested recovery backend over one e2b_sandbox: every expectation must
// match before a ref is re-attached; anything else is a silent null.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/process_ref.hpp>

#include "core/spawn_op.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>

namespace asio = boost::asio;

namespace prism_e2b {

namespace {

/// Immutable after construction: attach() may run concurrently.
class e2b_recovery_backend final : public process_recovery_backend {
public:
    e2b_recovery_backend(std::shared_ptr<e2b_sandbox> s, e2b_process_recovery_expectations e)
        : sandbox_(std::move(s)), expect_(std::move(e))
    {
    }

protected:
    void do_attach(std::string ref, output_callback on_data,
                   completion_handler<std::unique_ptr<process_handle>> h) override
    {
        if (!sandbox_) {
            refuse_without_sandbox(std::move(h));
            return;
        }
        detail::spawn_op(sandbox_->get_executor(), attach(std::move(ref), std::move(on_data)), std::move(h));
    }

private:
    /// No executor of our own: the refusal goes to the handler's executor from
    /// this thread. Never through the system executor: its pool thread can
    /// still be inside post when the caller destroys its io_context. Asio
    /// 1.81's type-erased completion executor cannot require blocking.never,
    /// so only the executor behind it can be posted to: an io_context's (a
    /// coroutine's, usually) is; any other is dispatched to, which may run the
    /// handler before this call returns.
    static void refuse_without_sandbox(completion_handler<std::unique_ptr<process_handle>> h)
    {
        auto ex = asio::get_associated_executor(h, asio::system_executor());
        auto refuse = [h = std::move(h)]() mutable { std::move(h)(std::unique_ptr<process_handle>()); };
        if (auto const* io = ex.target<asio::io_context::executor_type>())
            asio::post(*io, std::move(refuse));
        else
            asio::dispatch(ex, std::move(refuse));
    }

    asio::awaitable<result<std::unique_ptr<process_handle>>> attach(std::string ref, output_callback on_data)
    {
        using handle_ptr = std::unique_ptr<process_handle>;
        if (expect_.expected_sandbox_id.empty() || sandbox_->id() != expect_.expected_sandbox_id)
            co_return handle_ptr();
        auto rec = decode_process_ref(ref);
        if (!rec || rec->sandbox_id != expect_.expected_sandbox_id || rec->workspace != expect_.expected_workspace ||
            sandbox_->workdir() != expect_.expected_workspace)
            co_return handle_ptr();
        // Labels are attested by the vendor now, not by what we remember.
        auto labels = co_await sandbox_->async_fetch_labels();
        if (!labels) co_return handle_ptr();
        for (auto const& [k, v] : expect_.expected_labels) {
            auto it = labels->find(k);
            if (it == labels->end() || it->second != v) co_return handle_ptr();
        }
        auto h = co_await sandbox_->async_attach_process(std::move(ref), std::move(on_data));
        if (!h) co_return handle_ptr();  // never leak backend error text
        co_return std::move(*h);
    }

    std::shared_ptr<e2b_sandbox> sandbox_;
    e2b_process_recovery_expectations expect_;
};

}  // namespace

std::shared_ptr<process_recovery_backend> create_e2b_process_recovery_backend(
    std::shared_ptr<e2b_sandbox> sandbox, e2b_process_recovery_expectations expectations)
{
    return std::make_shared<e2b_recovery_backend>(std::move(sandbox), std::move(expectations));
}

}  // namespace prism_e2b
