// Draws "label [#####.....] done/total  rate/s  elapsed" on stderr.
#include "progress_bar.hpp"

#include <cstdio>
#include <unistd.h>

namespace prism_e2b::bench {

progress_bar::progress_bar(std::string label, std::size_t total, bool quiet)
    : label_(std::move(label)),
      total_(total),
      quiet_(quiet),
      tty_(::isatty(2) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_)
{
}

progress_bar::~progress_bar() { finish(); }

void progress_bar::tick(std::size_t n)
{
    done_.fetch_add(n, std::memory_order_relaxed);
    if (quiet_ || !tty_) return;
    std::unique_lock lock(draw_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    auto const now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(false);
}

void progress_bar::finish()
{
    if (finished_.exchange(true) || quiet_) return;
    std::lock_guard lock(draw_mutex_);
    draw(true);
}

void progress_bar::draw(bool final)
{
    constexpr int width = 30;
    std::size_t const done = done_.load(std::memory_order_relaxed);
    double const elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int const filled =
        total_ ? static_cast<int>(width * static_cast<double>(std::min(done, total_)) / static_cast<double>(total_))
               : width;
    char bar[width + 1];
    for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    double const rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    std::fprintf(stderr, "%s%-24s [%s] %zu/%zu  %.1f/s  %.1fs%s", tty_ ? "\r" : "", label_.c_str(), bar, done, total_,
                 rate, elapsed, final || !tty_ ? "\n" : "");
    std::fflush(stderr);
}

}  // namespace prism_e2b::bench
