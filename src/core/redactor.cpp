#include <prism_e2b/redactor.hpp>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace prism_e2b {

struct secret_redactor::state {
    mutable std::shared_mutex mutex;
    std::vector<std::string> secrets;  // longest first (contains_secret finds long ones first)
};

secret_redactor::secret_redactor() : state_(std::make_unique<state>()) {}
secret_redactor::~secret_redactor() = default;

void secret_redactor::add(std::string_view secret)
{
    if (secret.size() < min_secret_length) return;
    std::unique_lock lock(state_->mutex);
    auto& v = state_->secrets;
    if (std::find(v.begin(), v.end(), secret) != v.end()) return;
    auto pos = std::find_if(v.begin(), v.end(), [&](std::string const& s) { return s.size() < secret.size(); });
    v.insert(pos, std::string(secret));
}

std::string secret_redactor::redact(std::string_view text) const
{
    // Mark every byte covered by any occurrence of any secret in the original
    // text (overlapping occurrences included), then replace each covered run
    // once. Replacing secret by secret instead would let the tail of one
    // secret survive when another overlapping secret was replaced first.
    std::vector<bool> covered;
    {
        std::shared_lock lock(state_->mutex);
        for (auto const& s : state_->secrets) {
            for (auto pos = text.find(s); pos != std::string_view::npos; pos = text.find(s, pos + 1)) {
                if (covered.empty()) covered.resize(text.size(), false);
                std::fill(covered.begin() + static_cast<std::ptrdiff_t>(pos),
                          covered.begin() + static_cast<std::ptrdiff_t>(pos + s.size()), true);
            }
        }
    }
    if (covered.empty()) return std::string(text);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        if (!covered[i]) {
            out += text[i++];
            continue;
        }
        out += replacement;
        while (i < text.size() && covered[i]) ++i;
    }
    return out;
}

bool secret_redactor::contains_secret(std::string_view text) const
{
    std::shared_lock lock(state_->mutex);
    return std::any_of(state_->secrets.begin(), state_->secrets.end(),
                       [&](std::string const& s) { return text.find(s) != std::string_view::npos; });
}

bool secret_redactor::is_secret(std::string_view text) const
{
    std::shared_lock lock(state_->mutex);
    return std::find(state_->secrets.begin(), state_->secrets.end(), text) != state_->secrets.end();
}

secret_redactor& secret_redactor::global()
{
    static secret_redactor instance;
    return instance;
}

}  // namespace prism_e2b
