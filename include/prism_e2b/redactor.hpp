// Secret redaction: every registered secret becomes "[REDACTED]" in any text.
#ifndef PRISM_E2B_REDACTOR_HPP
#define PRISM_E2B_REDACTOR_HPP

#include <prism_e2b/export.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace prism_e2b {

/// Replaces every registered secret with `[REDACTED]`.
///
/// Thread safety: all members may be called concurrently.
/// Secrets shorter than min_secret_length are ignored (redacting one or two
/// characters would destroy every message without protecting anything).
class PRISM_E2B_API secret_redactor {
public:
    static constexpr std::size_t min_secret_length = 4;            ///< shorter secrets are ignored
    static constexpr std::string_view replacement = "[REDACTED]";  ///< what a secret is replaced with

    secret_redactor();
    ~secret_redactor();
    secret_redactor(secret_redactor const&) = delete;
    secret_redactor& operator=(secret_redactor const&) = delete;

    /// Registers a secret. Registering the same secret twice is harmless.
    void add(std::string_view secret);
    /// Returns `text` with every registered secret replaced (longest secrets first).
    std::string redact(std::string_view text) const;
    /// True when `text` contains any registered secret.
    bool contains_secret(std::string_view text) const;
    /// True when `text` is exactly one of the registered secrets.
    bool is_secret(std::string_view text) const;

    /// The process-wide redactor used by prism_e2b::error and every logger of the library.
    /// Clients register their API key and each envd access token here.
    static secret_redactor& global();

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace prism_e2b

#endif
