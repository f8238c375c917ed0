// An executor that forwards to another and counts the work submitted to it
// from any thread but its owner's. A completion must reach the caller's
// executor from the caller's own thread or its io_context's: one posted from a
// thread the library borrowed (the system executor's pool) can still be inside
// post when the caller destroys the io_context, a data race TSan reports at
// random; this probe sees it every time.
#ifndef PRISM_E2B_TESTS_THREAD_PROBE_EXECUTOR_HPP
#define PRISM_E2B_TESTS_THREAD_PROBE_EXECUTOR_HPP

#include <boost/asio/execution.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/require.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

namespace prism_e2b::test {

template <class Inner>
class thread_probe_executor {
public:
    thread_probe_executor(Inner inner, std::thread::id owner, std::shared_ptr<std::atomic<int>> foreign)
        : inner_(std::move(inner)), owner_(owner), foreign_(std::move(foreign))
    {
    }

    /// Submissions from threads other than the owner's, so far.
    int foreign_submissions() const { return foreign_->load(); }

    template <class Property>
    auto query(Property const& p) const -> decltype(boost::asio::query(std::declval<Inner const&>(), p))
    {
        return boost::asio::query(inner_, p);
    }

    template <class Property>
    auto require(Property const& p) const
        -> thread_probe_executor<std::decay_t<decltype(boost::asio::require(std::declval<Inner const&>(), p))>>
    {
        return {boost::asio::require(inner_, p), owner_, foreign_};
    }

    template <class Property>
    auto prefer(Property const& p) const
        -> thread_probe_executor<std::decay_t<decltype(boost::asio::prefer(std::declval<Inner const&>(), p))>>
    {
        return {boost::asio::prefer(inner_, p), owner_, foreign_};
    }

    template <class F>
    void execute(F&& f) const
    {
        if (std::this_thread::get_id() != owner_) foreign_->fetch_add(1);
        inner_.execute(std::forward<F>(f));
    }

    friend bool operator==(thread_probe_executor const& a, thread_probe_executor const& b) noexcept
    {
        return a.inner_ == b.inner_ && a.foreign_ == b.foreign_;
    }
    friend bool operator!=(thread_probe_executor const& a, thread_probe_executor const& b) noexcept
    {
        return !(a == b);
    }

private:
    template <class>
    friend class thread_probe_executor;

    Inner inner_;
    std::thread::id owner_;
    std::shared_ptr<std::atomic<int>> foreign_;
};

/// A probe over `inner` owned by the calling thread.
template <class Inner>
thread_probe_executor<Inner> probe_this_thread(Inner inner)
{
    return {std::move(inner), std::this_thread::get_id(), std::make_shared<std::atomic<int>>(0)};
}

}  // namespace prism_e2b::test

#endif
