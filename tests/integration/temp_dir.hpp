// A directory a test owns under the temp dir (mkdtemp), removed with everything in it
// (deep trees included) when the test is done.
#ifndef PRISM_E2B_TESTS_INTEGRATION_TEMP_DIR_HPP
#define PRISM_E2B_TESTS_INTEGRATION_TEMP_DIR_HPP

#include "emulator/sandbox_fs.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace prism_e2b::test {

struct temp_dir {
    std::filesystem::path path;
    /// `prefix`: the name before mkdtemp's six random characters.
    explicit temp_dir(std::string const& prefix)
    {
        std::string t = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
        if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
        path = t;
    }
    temp_dir(temp_dir const&) = delete;
    temp_dir& operator=(temp_dir const&) = delete;
    ~temp_dir() { prism_e2b::local::detail::remove_tree(path.string()); }
};

}  // namespace prism_e2b::test

#endif
