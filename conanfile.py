# Conan 2 recipe for prism_e2b, at the repository root so that exports_sources
# and the layout see the project as CMake does. It mirrors CMakeLists.txt: the
# same options (tests/packaging/check_recipes.py checks the mapping), the same
# dependencies (Boost >= 1.81 with json/url/system, OpenSSL 3), and the package
# exposes prism_e2b::prism_e2b (and prism_e2b::emulator with with_local_server).
# CMakeLists.txt never calls Conan; Conan only generates the toolchain and the
# dependency files.
#
#   conan create . --profile:all conan/profiles/debian12-gcc12 --build=missing
from conan import ConanFile
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy


class PrismE2bConan(ConanFile):
    name = "prism_e2b"
    version = "0.1.0"
    license = "MIT"
    url = "https://github.com/prism-e2b/prism-e2b"
    description = "C++20 coroutine SDK for E2B sandboxes: native client, DisposableSandbox adapter, local server"
    topics = ("e2b", "sandbox", "asio", "coroutines")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "separate_compilation": [True, False],
        "with_local_server": [True, False],
        "with_cli": [True, False],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "separate_compilation": True,
        "with_local_server": False,
        "with_cli": False,
    }
    # Only what building the library, the local server and the CLI reads.
    exports_sources = ("CMakeLists.txt", "cmake/*", "include/*", "src/*", "LICENSE", "CHANGELOG.md")

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        self.requires("boost/[>=1.81 <2]", transitive_headers=True)
        self.requires("openssl/[>=3 <4]")
        self.requires("zlib/[>=1.2.11 <2]")  # gzip in the client and the emulator's /files
        if self.options.with_cli:
            self.requires("cli11/[>=2.1 <3]")  # the CLI's argument parsing (header-only)

    def validate(self):
        from conan.tools.build import check_min_cppstd

        check_min_cppstd(self, "20")

    def generate(self):
        tc = CMakeToolchain(self)  # BUILD_SHARED_LIBS comes from the shared option
        tc.variables["PRISM_E2B_BUILD_TESTS"] = False
        tc.variables["PRISM_E2B_BUILD_EXAMPLES"] = False
        tc.variables["PRISM_E2B_BUILD_BENCH"] = False
        tc.variables["PRISM_E2B_BUILD_DOCS"] = False
        tc.variables["PRISM_E2B_INSTALL"] = True
        tc.variables["PRISM_E2B_BUILD_CLI"] = bool(self.options.with_cli)
        tc.variables["PRISM_E2B_BUILD_LOCAL_SERVER"] = bool(self.options.with_local_server)
        tc.variables["PRISM_E2B_SEPARATE_COMPILATION"] = bool(self.options.separate_compilation)
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE", src=self.source_folder, dst=self.package_folder + "/licenses")
        CMake(self).install()

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "prism_e2b")
        self.cpp_info.set_property("pkg_config_name", "prism_e2b")
        lib = self.cpp_info.components["prism_e2b"]
        lib.libs = ["prism_e2b"]
        lib.set_property("cmake_target_name", "prism_e2b::prism_e2b")
        lib.requires = ["boost::headers", "boost::json", "boost::url", "boost::system", "openssl::ssl", "openssl::crypto", "zlib::zlib"]
        lib.system_libs = ["pthread"]
        defines = ["BOOST_ASIO_NO_DEPRECATED", "BOOST_JSON_NO_LIB", "BOOST_URL_NO_LIB"]
        if self.options.separate_compilation:
            defines += ["BOOST_ASIO_SEPARATE_COMPILATION", "BOOST_BEAST_SEPARATE_COMPILATION"]
        lib.defines = defines
        if self.options.with_local_server:
            emulator = self.cpp_info.components["emulator"]
            emulator.libs = ["prism_e2b_emulator"]
            emulator.set_property("cmake_target_name", "prism_e2b::emulator")
            emulator.requires = ["prism_e2b"]
