# Conan 2 recipe for prism_e2b. It mirrors CMakeLists.txt: the same options,
# the same dependencies (Boost 1.81 with json/url/system, OpenSSL 3), and the
# package exposes the CMake target prism_e2b::prism_e2b. CMakeLists.txt never
# calls Conan; Conan only generates the toolchain and dependency files.
import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy


class PrismE2bConan(ConanFile):
    name = "prism_e2b"
    version = "0.1.0"
    license = "MIT"
    description = "C++20 coroutine SDK for E2B sandboxes: native client, DisposableSandbox adapter, local server"
    topics = ("e2b", "sandbox", "asio", "coroutines")
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "fPIC": [True, False],
        "separate_compilation": [True, False],
        "with_local_server": [True, False],
        "with_cli": [True, False],
    }
    default_options = {
        "fPIC": True,
        "separate_compilation": True,
        "with_local_server": True,
        "with_cli": True,
        "boost/*:without_test": False,
    }
    exports_sources = ("CMakeLists.txt", "cmake/*", "include/*", "src/*", "tests/*", "examples/*", "bench/*")

    def layout(self):
        cmake_layout(self, src_folder="..")

    def requirements(self):
        self.requires("boost/1.81.0", transitive_headers=True)
        self.requires("openssl/[>=3 <4]")

    def validate(self):
        from conan.tools.build import check_min_cppstd
        check_min_cppstd(self, "20")

    def generate(self):
        tc = CMakeToolchain(self)
        tc.variables["PRISM_E2B_BUILD_TESTS"] = False
        tc.variables["PRISM_E2B_BUILD_EXAMPLES"] = False
        tc.variables["PRISM_E2B_BUILD_BENCH"] = False
        tc.variables["PRISM_E2B_BUILD_CLI"] = self.options.with_cli
        tc.variables["PRISM_E2B_BUILD_LOCAL_SERVER"] = self.options.with_local_server
        tc.variables["PRISM_E2B_SEPARATE_COMPILATION"] = self.options.separate_compilation
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "prism_e2b")
        self.cpp_info.set_property("cmake_target_name", "prism_e2b::prism_e2b")
        self.cpp_info.components["prism_e2b"].libs = ["prism_e2b"]
        self.cpp_info.components["prism_e2b"].set_property("cmake_target_name", "prism_e2b::prism_e2b")
        self.cpp_info.components["prism_e2b"].requires = ["boost::headers", "boost::json", "boost::url",
                                                          "boost::system", "openssl::ssl", "openssl::crypto"]
        self.cpp_info.components["prism_e2b"].system_libs = ["pthread"]
        defines = ["BOOST_ASIO_NO_DEPRECATED", "BOOST_JSON_NO_LIB", "BOOST_URL_NO_LIB"]
        if self.options.separate_compilation:
            defines += ["BOOST_ASIO_SEPARATE_COMPILATION", "BOOST_BEAST_SEPARATE_COMPILATION"]
        self.cpp_info.components["prism_e2b"].defines = defines
        if self.options.with_local_server:
            self.cpp_info.components["emulator"].libs = ["prism_e2b_emulator"]
            self.cpp_info.components["emulator"].set_property("cmake_target_name", "prism_e2b::emulator")
            self.cpp_info.components["emulator"].requires = ["prism_e2b"]
