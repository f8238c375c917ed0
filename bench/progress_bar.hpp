// A progress bar on stderr for long benchmark runs. Redraws at most every
// 100 ms; prints nothing when stderr is not a terminal unless forced, so logs
// and CI output stay clean (a final line is always printed).
#ifndef PRISM_E2B_BENCH_PROGRESS_BAR_HPP
#define PRISM_E2B_BENCH_PROGRESS_BAR_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace prism_e2b::bench {

/// Thread safety: tick() may be called from any thread (atomic counter; the
/// redraw is behind a mutex taken with try_lock so tick never blocks).
class progress_bar {
public:
    progress_bar(std::string label, std::size_t total, bool quiet = false);
    ~progress_bar();  ///< finish()
    progress_bar(progress_bar const&) = delete;
    progress_bar& operator=(progress_bar const&) = delete;

    void tick(std::size_t n = 1);
    /// Prints the final line once.
    void finish();

private:
    void draw(bool final);

    std::string label_;
    std::size_t total_;
    bool quiet_;
    bool tty_;
    std::atomic<std::size_t> done_{0};
    std::atomic<bool> finished_{false};
    std::mutex draw_mutex_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace prism_e2b::bench

#endif
