#include "wire/connection_pool.hpp"

#include <boost/asio/dispatch.hpp>

namespace asio = boost::asio;

namespace prism_e2b::wire {

std::shared_ptr<connection> origin_pool::take_idle(std::chrono::milliseconds max_idle)
{
    std::vector<std::shared_ptr<connection>> expired;
    std::shared_ptr<connection> found;
    {
        std::lock_guard lock(mutex);
        auto const now = std::chrono::steady_clock::now();
        while (!idle.empty()) {
            auto c = std::move(idle.back());
            idle.pop_back();
            if (now - c->idle_since > max_idle || !c->lowest().socket().is_open()) {
                expired.push_back(std::move(c));
                --open;
                continue;
            }
            found = std::move(c);
            break;
        }
    }
    for (auto& c : expired) c->close_now();
    return found;
}

void origin_pool::put_idle(std::shared_ptr<connection> c)
{
    c->idle_since = std::chrono::steady_clock::now();
    c->reused = true;
    std::lock_guard lock(mutex);
    idle.push_back(std::move(c));
}

void origin_pool::opened()
{
    std::lock_guard lock(mutex);
    ++open;
}

void origin_pool::discard(std::shared_ptr<connection> const& c)
{
    // On the connection's strand: a stream's close() may be closing the same
    // socket there right now (found by TSan).
    asio::dispatch(c->strand, [c] { c->close_now(); });
    std::lock_guard lock(mutex);
    --open;
}

lease& lease::operator=(lease&& o) noexcept
{
    if (this != &o) {
        reset();
        pool = std::move(o.pool);
        conn = std::move(o.conn);
        permit = std::move(o.permit);
        reusable = o.reusable;
    }
    return *this;
}

void lease::reset() noexcept
{
    if (conn && pool) {
        if (reusable)
            pool->put_idle(std::move(conn));  // before the permit: the next waiter finds it idle
        else
            pool->discard(conn);
    }
    conn.reset();
    pool.reset();
    permit.reset();
    reusable = false;
}

std::shared_ptr<origin_pool> connection_pool::pool_for(origin const& o)
{
    std::lock_guard lock(mutex_);
    auto& p = pools_[o.key()];
    if (!p) p = std::make_shared<origin_pool>(max_per_origin_);
    return p;
}

asio::awaitable<result<lease>> connection_pool::acquire(origin const& o, bool fresh)
{
    lease l;
    l.pool = pool_for(o);
    auto permit = co_await l.pool->slots->acquire();
    if (!permit) co_return permit.error();
    l.permit = std::move(*permit);
    if (!fresh) {
        if (auto c = l.pool->take_idle(idle_timeout_)) {
            reused_.fetch_add(1);
            l.conn = std::move(c);
            co_return l;
        }
    }
    auto c = co_await open_connection(ex_, tls_, o, connect_timeout_);
    if (!c) co_return c.error();
    opened_.fetch_add(1);
    l.pool->opened();
    l.conn = std::move(*c);
    co_return l;
}

std::size_t connection_pool::open_connections(origin const& o) const
{
    std::shared_ptr<origin_pool> p;
    {
        std::lock_guard lock(mutex_);
        auto it = pools_.find(o.key());
        if (it == pools_.end()) return 0;
        p = it->second;
    }
    std::lock_guard lock(p->mutex);
    return p->open;
}

}  // namespace prism_e2b::wire
