#include <prism_e2b/redactor.hpp>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace prism_e2b {

struct secret_redactor::state {
    mutable std::shared_mutex mutex;
    std::vector<std::string> secrets;  // longest first, so a secret containing another is replaced whole
};

secret_redactor::secret_redactor() : state_(std::make_unique<state>()) {}
secret_redactor::~secret_redactor() = default;

void secret_redactor::add(std::string_view secret)
{
    if (secret.size() < min_secret_length)
        return;
    std::unique_lock lock(state_->mutex);
    auto& v = state_->secrets;
    if (std::find(v.begin(), v.end(), secret) != v.end())
        return;
    auto pos = std::find_if(v.begin(), v.end(), [&](std::string const& s) { return s.size() < secret.size(); });
    v.insert(pos, std::string(secret));
}

std::string secret_redactor::redact(std::string_view text) const
{
    std::string out(text);
    std::shared_lock lock(state_->mutex);
    for (auto const& s : state_->secrets) {
        std::size_t pos = 0;
        while ((pos = out.find(s, pos)) != std::string::npos) {
            out.replace(pos, s.size(), replacement);
            pos += replacement.size();
        }
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
