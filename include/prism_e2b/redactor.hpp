// Secret redaction: every registered secret becomes "[REDACTED]" in any text.
#ifndef PRISM_E2B_REDACTOR_HPP
#define PRISM_E2B_REDACTOR_HPP

#include <prism_e2b/export.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace prism_e2b {

/// Replaces every registered secret with `[REDACTED]`.
///
/// Secrets have a lifetime: `add(secret)` registers one for the life of the
/// redactor (an API key, the local server's admin token); `add(secret, scope)`
/// registers one under a scope (the wire client uses the sandbox id for that
/// sandbox's envd access token) and `release(scope)` forgets every secret held
/// only by that scope (the sandbox was killed, or its last handle forgotten).
/// A long-lived host that creates and kills sandboxes therefore keeps as many
/// secrets as it has live sandboxes, not as many as it ever saw.
///
/// Cost: `redact`/`contains_secret` make one pass over the text whatever the
/// number of secrets (a 4-byte window filter, then a check of the few secrets
/// that start with that window); `add` of a secret that is already registered
/// under the scope takes only the shared lock.
///
/// Thread safety: all members may be called concurrently. Readers (`redact`,
/// `contains_secret`, `is_secret`, repeated `add`) share a reader lock; only a
/// new registration or a release takes the exclusive lock.
///
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

    /// Registers a secret for the redactor's lifetime. Registering twice is harmless.
    void add(std::string_view secret);
    /// Registers a secret held by `scope` (non-empty) until `release(scope)`.
    /// The same secret may be held by several scopes and permanently; it is
    /// forgotten when nothing holds it any more.
    void add(std::string_view secret, std::string_view scope);
    /// Drops every secret held by `scope`; secrets other scopes (or `add(secret)`)
    /// still hold stay. Unknown scopes are a no-op.
    void release(std::string_view scope);

    /// Returns `text` with every registered secret replaced; overlapping and
    /// nested occurrences are covered as one run.
    std::string redact(std::string_view text) const;
    /// True when `text` contains any registered secret.
    bool contains_secret(std::string_view text) const;
    /// True when `text` is exactly one of the registered secrets.
    bool is_secret(std::string_view text) const;
    /// How many distinct secrets are registered now.
    std::size_t size() const;

    /// The process-wide redactor used by prism_e2b::error and every logger of the library.
    /// Clients register their API key and each envd access token here.
    static secret_redactor& global();

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace prism_e2b

#endif
