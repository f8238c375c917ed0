// The gvisor engine's image writer (engines/gvisor/image_writer.hpp) with the
// writes and the RAM held played by the test: due images are written in turn,
// a cancelled one never, and past the RAM cap the longest-frozen goes first.
#include "emulator/engines/gvisor/image_writer.hpp"
#include "eventually.hpp"

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <string>
#include <vector>

using namespace prism_e2b::local::detail;
using prism_e2b::test::eventually;

namespace {

/// What the writer asked for, in order; each write answers `outcome`.
struct recorded_writes {
    std::mutex mutex;
    std::vector<std::string> ids;
    image_writer::outcome outcome = image_writer::outcome::written;

    image_writer::outcome write(std::string const& id)
    {
        std::lock_guard lk(mutex);
        ids.push_back(id);
        return outcome;
    }
    std::vector<std::string> seen()
    {
        std::lock_guard lk(mutex);
        return ids;
    }
};

prism_e2b::local::memory_tier_policy images_after(std::optional<std::chrono::seconds> delay,
                                                  std::uint64_t cap_mb = 4096)
{
    prism_e2b::local::memory_tier_policy p;
    p.image_after = delay;
    p.frozen_memory_cap_mb = cap_mb;
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_image_writer)

BOOST_AUTO_TEST_CASE(a_due_image_is_written_and_a_cancelled_one_never)
{
    recorded_writes w;
    image_writer writer(
        images_after(std::chrono::seconds(3600)), [&](std::string const& id) { return w.write(id); },
        [](std::string const&) { return std::uint64_t{1} << 20; });
    writer.schedule("later");                         // due in an hour
    writer.schedule("now", std::chrono::seconds(0));  // due at once (a retry's delay)
    BOOST_TEST(eventually([&] { return writer.stats().written == 1u; }));
    BOOST_TEST(w.seen() == std::vector<std::string>{"now"});
    auto s = writer.stats();
    BOOST_TEST(s.frozen == 1u);  // "later", still in RAM
    BOOST_TEST(s.frozen_bytes == std::uint64_t{1} << 20);
    writer.cancel("later");  // resumed
    BOOST_TEST(writer.stats().frozen == 0u);
    writer.stop();
    BOOST_TEST(w.seen() == std::vector<std::string>{"now"});
}

BOOST_AUTO_TEST_CASE(past_the_ram_cap_the_longest_frozen_goes_to_disk_first)
{
    recorded_writes w;
    // Only under pressure; each sandbox holds 1 MiB and the cap is 1 MiB: two are one too many.
    image_writer writer(
        images_after(std::nullopt, 1), [&](std::string const& id) { return w.write(id); },
        [](std::string const&) { return std::uint64_t{1} << 20; });
    writer.schedule("first");
    writer.schedule("second");
    BOOST_TEST(eventually([&] { return writer.stats().written_under_cap == 1u; }));
    BOOST_TEST(w.seen() == std::vector<std::string>{"first"});
    auto const s = writer.stats();
    BOOST_TEST(s.frozen == 1u);  // "second" fits under the cap alone
    writer.stop();
    BOOST_TEST(w.seen().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_write_that_did_not_happen_is_counted_and_a_skipped_one_is_not)
{
    recorded_writes w;
    w.outcome = image_writer::outcome::failed;
    image_writer writer(
        images_after(std::chrono::seconds(0)), [&](std::string const& id) { return w.write(id); },
        [](std::string const&) { return std::uint64_t{0}; });
    writer.schedule("a");
    BOOST_TEST(eventually([&] { return writer.stats().failed == 1u; }));
    {
        std::lock_guard lk(w.mutex);
        w.outcome = image_writer::outcome::skipped;  // resumed before its turn
    }
    writer.schedule("b");
    BOOST_TEST(eventually([&] { return w.seen().size() == 2u; }));
    writer.stop();  // waits for the write in progress
    auto const s = writer.stats();
    BOOST_TEST(s.failed == 1u);
    BOOST_TEST(s.written == 0u);
    // Nothing is scheduled after stop().
    writer.schedule("c");
    BOOST_TEST(writer.stats().frozen == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
