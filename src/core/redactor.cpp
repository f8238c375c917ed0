#include <prism_e2b/redactor.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace prism_e2b {

namespace {

// Every secret is at least min_secret_length bytes, so its first four bytes
// ("window") identify the few secrets that can start at a text position. A
// 1 Mi-bit filter (128 KiB) over the windows' hashes rejects almost every
// position with one bit test (about 1% pass with 10,000 secrets), so a pass
// costs about the same with 10 secrets as with 10,000.
static_assert(secret_redactor::min_secret_length >= 4);
constexpr std::size_t window_size = 4;
constexpr unsigned filter_log2 = 20;
constexpr std::size_t filter_bits = std::size_t{1} << filter_log2;

std::uint32_t window_at(char const* p) noexcept
{
    std::uint32_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
}

std::size_t filter_slot(std::uint32_t window) noexcept
{
    return static_cast<std::uint32_t>(window * 2654435761u) >> (32 - filter_log2);
}

struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class V>
using string_map = std::unordered_map<std::string, V, string_hash, std::equal_to<>>;

/// Covered byte ranges [first, second), ascending, adjacent or overlapping ones merged.
using runs = std::vector<std::pair<std::size_t, std::size_t>>;

}  // namespace

struct secret_redactor::state {
    struct holders {
        bool permanent = false;
        std::vector<std::string> scopes;  // usually one
    };

    mutable std::shared_mutex mutex;
    string_map<holders> secrets;
    // Pointers to the keys of `secrets` (stable: node-based map).
    std::unordered_map<std::uint32_t, std::vector<std::string const*>> by_window;
    string_map<std::vector<std::string>> by_scope;
    std::unordered_map<std::size_t, std::uint32_t> slot_count;  // touched only by add/release
    std::vector<bool> filter = std::vector<bool>(filter_bits, false);

    // Requires the exclusive lock. Returns the holders of a (possibly new) secret.
    holders& insert(std::string_view secret)
    {
        auto it = secrets.find(secret);
        bool const inserted = it == secrets.end();
        if (inserted) it = secrets.emplace(std::string(secret), holders{}).first;
        if (inserted) {
            auto const w = window_at(it->first.data());
            by_window[w].push_back(&it->first);
            auto const slot = filter_slot(w);
            if (slot_count[slot]++ == 0) filter[slot] = true;
        }
        return it->second;
    }

    // Requires the exclusive lock.
    void erase(std::string const& secret)
    {
        auto it = secrets.find(secret);
        if (it == secrets.end()) return;
        auto const w = window_at(it->first.data());
        auto& list = by_window[w];
        list.erase(std::remove(list.begin(), list.end(), &it->first), list.end());
        if (list.empty()) by_window.erase(w);
        auto const slot = filter_slot(w);
        if (--slot_count[slot] == 0) {
            slot_count.erase(slot);
            filter[slot] = false;
        }
        secrets.erase(it);
    }

    // Requires a lock (shared is enough). Calls on_match(pos, len) for every
    // occurrence of every secret, in ascending pos; stops when it returns false.
    template <class F>
    void scan(std::string_view text, F&& on_match) const
    {
        if (text.size() < window_size || secrets.empty()) return;
        for (std::size_t i = 0; i + window_size <= text.size(); ++i) {
            auto const w = window_at(text.data() + i);
            if (!filter[filter_slot(w)]) continue;
            auto it = by_window.find(w);
            if (it == by_window.end()) continue;
            for (auto const* s : it->second) {
                if (text.size() - i < s->size()) continue;
                if (std::memcmp(text.data() + i, s->data(), s->size()) != 0) continue;
                if (!on_match(i, s->size())) return;
            }
        }
    }
};

secret_redactor::secret_redactor() : state_(std::make_unique<state>()) {}
secret_redactor::~secret_redactor() = default;

void secret_redactor::add(std::string_view secret)
{
    if (secret.size() < min_secret_length) return;
    {
        std::shared_lock lock(state_->mutex);
        auto it = state_->secrets.find(secret);
        if (it != state_->secrets.end() && it->second.permanent) return;
    }
    std::unique_lock lock(state_->mutex);
    state_->insert(secret).permanent = true;
}

void secret_redactor::add(std::string_view secret, std::string_view scope)
{
    if (scope.empty()) return add(secret);
    if (secret.size() < min_secret_length) return;
    auto held_by_scope = [&](state::holders const& h) {
        return std::find(h.scopes.begin(), h.scopes.end(), scope) != h.scopes.end();
    };
    {
        std::shared_lock lock(state_->mutex);
        auto it = state_->secrets.find(secret);
        if (it != state_->secrets.end() && held_by_scope(it->second)) return;
    }
    std::unique_lock lock(state_->mutex);
    auto& h = state_->insert(secret);
    if (held_by_scope(h)) return;  // another thread got here first
    h.scopes.emplace_back(scope);
    state_->by_scope[std::string(scope)].emplace_back(secret);
}

void secret_redactor::release(std::string_view scope)
{
    std::unique_lock lock(state_->mutex);
    auto found = state_->by_scope.find(scope);
    if (found == state_->by_scope.end()) return;
    auto const held = std::move(found->second);
    state_->by_scope.erase(found);
    for (auto const& secret : held) {
        auto it = state_->secrets.find(secret);
        if (it == state_->secrets.end()) continue;
        auto& scopes = it->second.scopes;
        scopes.erase(std::remove(scopes.begin(), scopes.end(), scope), scopes.end());
        if (scopes.empty() && !it->second.permanent) state_->erase(secret);
    }
}

std::string secret_redactor::redact(std::string_view text) const
{
    // Every byte covered by any occurrence of any secret (overlapping ones
    // included) is replaced, each covered run once: replacing secret by secret
    // instead would let the tail of one survive when an overlapping one went first.
    runs covered;
    {
        std::shared_lock lock(state_->mutex);
        state_->scan(text, [&](std::size_t pos, std::size_t len) {
            if (!covered.empty() && pos <= covered.back().second)
                covered.back().second = std::max(covered.back().second, pos + len);
            else
                covered.emplace_back(pos, pos + len);
            return true;
        });
    }
    if (covered.empty()) return std::string(text);
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (auto const& [first, last] : covered) {
        out.append(text.substr(at, first - at));
        out.append(replacement);
        at = last;
    }
    out.append(text.substr(at));
    return out;
}

bool secret_redactor::contains_secret(std::string_view text) const
{
    bool found = false;
    std::shared_lock lock(state_->mutex);
    state_->scan(text, [&](std::size_t, std::size_t) {
        found = true;
        return false;
    });
    return found;
}

bool secret_redactor::is_secret(std::string_view text) const
{
    std::shared_lock lock(state_->mutex);
    return state_->secrets.find(text) != state_->secrets.end();
}

std::size_t secret_redactor::size() const
{
    std::shared_lock lock(state_->mutex);
    return state_->secrets.size();
}

secret_redactor& secret_redactor::global()
{
    static secret_redactor instance;
    return instance;
}

}  // namespace prism_e2b
