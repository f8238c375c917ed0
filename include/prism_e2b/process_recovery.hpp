// Attested process recovery: re-attach a process ref only when the sandbox id,
// workspace and labels all match what the host expects (contract.md "Process
// refs and recovery").
#ifndef PRISM_E2B_PROCESS_RECOVERY_HPP
#define PRISM_E2B_PROCESS_RECOVERY_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/process.hpp>

#include <map>
#include <memory>
#include <string>

namespace prism_e2b {

class e2b_sandbox;

/// Re-attaches processes by ref. A null handle means "cannot be attested or is
/// gone"; it never carries an error text, so no backend detail leaks.
///
/// async_attach follows the universal model (prism_e2b/async.hpp): completion
/// `void(result<std::unique_ptr<process_handle>>)`, a null handle (not an error)
/// when the ref cannot be attested. Per-operation cancellation: terminal.
class PRISM_E2B_API process_recovery_backend {
public:
    virtual ~process_recovery_backend() = default;
    /// The process behind `ref`, following its output with `on_data`; null when
    /// it cannot be attested or is gone.
    template <class CompletionToken = default_completion_token>
    auto async_attach(std::string ref, output_callback on_data, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<process_handle>>(
            std::forward<CompletionToken>(token),
            [this](std::string r, output_callback cb, completion_handler<std::unique_ptr<process_handle>> h) {
                do_attach(std::move(r), std::move(cb), std::move(h));
            },
            std::move(ref), std::move(on_data));
    }

protected:
    /// The compiled body of async_attach.
    virtual void do_attach(std::string ref, output_callback on_data,
                           completion_handler<std::unique_ptr<process_handle>> h) = 0;
};

/// What create_e2b_process_recovery_backend() checks before re-attaching.
struct e2b_process_recovery_expectations {
    std::string expected_sandbox_id;  ///< the ref must name this sandbox
    std::string expected_workspace;   ///< and this workspace
    /// Each must be present with this value in the vendor's current metadata.
    std::map<std::string, std::string> expected_labels;
};

/// The attested backend over one e2b_sandbox. attach() checks, in order: the
/// sandbox's id equals expected_sandbox_id; the ref decodes and names that
/// sandbox and expected_workspace; the vendor's metadata (get_sandbox_info)
/// carries every expected label; then e2b_sandbox::attach_process. Any mismatch
/// or failure: null.
///
/// Thread safety: attach() may be called concurrently (the object is immutable).
PRISM_E2B_API std::shared_ptr<process_recovery_backend> create_e2b_process_recovery_backend(
    std::shared_ptr<e2b_sandbox> sandbox, e2b_process_recovery_expectations expectations);

}  // namespace prism_e2b

#endif
