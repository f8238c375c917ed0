#!/usr/bin/env python3
"""Checks the Conan recipe and the vcpkg port without Conan or vcpkg (neither
can be installed on the build machines): conanfile.py loads against a stub of
the conan module and its exports_sources name existing files; every CMake
variable the recipe or the port sets is an option of CMakeLists.txt; the
versions agree; the library names match the CMake targets.

usage: check_recipes.py <repository root>"""
import glob
import json
import os
import re
import sys
import types

root = os.path.abspath(sys.argv[1])
problems = []


def fail(msg):
    problems.append(msg)


cmake = open(os.path.join(root, "CMakeLists.txt")).read()
cmake_options = set(re.findall(r"^option\((\w+)", cmake, re.M))
version = re.search(r"project\(prism_e2b VERSION ([0-9.]+)", cmake).group(1)
# Variables CMake itself understands (set by the tools' toolchains).
cmake_builtin = {"BUILD_SHARED_LIBS", "CMAKE_POSITION_INDEPENDENT_CODE"}

# ---- Conan: load conanfile.py against a stub `conan` package -------------------
recorded = {"variables": {}, "copies": [], "installed": False, "configured": False}


class _Options(dict):
    def __getattr__(self, k):
        return self[k]

    def __setattr__(self, k, v):
        self[k] = v

    def rm_safe(self, k):
        self.pop(k, None)


class _Toolchain:
    def __init__(self, conanfile):
        self.variables = recorded["variables"]

    def generate(self):
        pass


class _Deps(_Toolchain):
    pass


class _CMake:
    def __init__(self, conanfile):
        pass

    def configure(self):
        recorded["configured"] = True

    def build(self):
        pass

    def install(self):
        recorded["installed"] = True


class _Component:
    def __init__(self):
        self.libs, self.requires, self.system_libs, self.defines, self.properties = [], [], [], [], {}

    def set_property(self, k, v):
        self.properties[k] = v


class _CppInfo(_Component):
    def __init__(self):
        super().__init__()
        self.components = {}

    def __getattribute__(self, k):
        if k == "components":
            comps = object.__getattribute__(self, "components")

            class _Auto(dict):
                def __missing__(d, key):
                    d[key] = _Component()
                    return d[key]

            if not isinstance(comps, _Auto):
                comps = _Auto(comps)
                object.__setattr__(self, "components", comps)
            return comps
        return object.__getattribute__(self, k)


conan = types.ModuleType("conan")
conan.ConanFile = type("ConanFile", (), {})
tools = types.ModuleType("conan.tools")
tools_cmake = types.ModuleType("conan.tools.cmake")
tools_cmake.CMake, tools_cmake.CMakeDeps, tools_cmake.CMakeToolchain = _CMake, _Deps, _Toolchain
tools_cmake.cmake_layout = lambda conanfile, **kw: recorded.setdefault("layout_args", kw)
tools_files = types.ModuleType("conan.tools.files")
tools_files.copy = lambda conanfile, pattern, src, dst, **kw: recorded["copies"].append((pattern, src))
tools_build = types.ModuleType("conan.tools.build")
tools_build.check_min_cppstd = lambda conanfile, v: recorded.setdefault("cppstd", v)
sys.modules.update({"conan": conan, "conan.tools": tools, "conan.tools.cmake": tools_cmake,
                    "conan.tools.files": tools_files, "conan.tools.build": tools_build})

ns = {}
exec(compile(open(os.path.join(root, "conanfile.py")).read(), "conanfile.py", "exec"), ns)
recipe_cls = ns["PrismE2bConan"]
if recipe_cls.version != version:
    fail(f"conanfile.py version {recipe_cls.version} != project(VERSION) {version}")
for pattern in recipe_cls.exports_sources:
    if not glob.glob(os.path.join(root, pattern)):
        fail(f"conanfile.py exports_sources '{pattern}' matches nothing at the repository root")
for needed in ("CMakeLists.txt", "cmake/*", "include/*", "src/*", "LICENSE"):
    if needed not in recipe_cls.exports_sources:
        fail(f"conanfile.py does not export {needed}")
if set(recipe_cls.options) != set(recipe_cls.default_options):
    fail("conanfile.py: options and default_options name different options")

for opts in ({k: v for k, v in recipe_cls.default_options.items()},
             {**recipe_cls.default_options, "shared": True, "with_local_server": True, "with_cli": True}):
    recorded["variables"].clear()
    r = recipe_cls()
    r.options = _Options(opts)
    r.settings = None
    r.source_folder, r.package_folder = root, "/nonexistent"
    r.cpp_info = _CppInfo()
    r.configure()
    if opts["shared"] and "fPIC" in r.options:
        fail("conanfile.py keeps fPIC for a shared build")
    r.layout()
    if recorded.get("layout_args", {}).get("src_folder", ".") != ".":
        fail("conanfile.py: cmake_layout src_folder points outside the export")
    r.generate()
    for var in recorded["variables"]:
        if var not in cmake_options | cmake_builtin:
            fail(f"conanfile.py sets {var}, which CMakeLists.txt does not define")
    if recorded["variables"].get("PRISM_E2B_BUILD_LOCAL_SERVER") != opts["with_local_server"]:
        fail("conanfile.py: with_local_server does not reach PRISM_E2B_BUILD_LOCAL_SERVER")
    if recorded["variables"].get("PRISM_E2B_BUILD_CLI") != opts["with_cli"]:
        fail("conanfile.py: with_cli does not reach PRISM_E2B_BUILD_CLI")
    r.build()
    r.package()
    if not recorded["installed"] or not any(p == "LICENSE" for p, _ in recorded["copies"]):
        fail("conanfile.py package() must install and copy LICENSE")
    r.package_info()
    comps = r.cpp_info.components
    if comps["prism_e2b"].libs != ["prism_e2b"]:
        fail("conanfile.py: the library is not libprism_e2b")
    if opts["with_local_server"] and comps["emulator"].libs != ["prism_e2b_emulator"]:
        fail("conanfile.py: the emulator library is not libprism_e2b_emulator")

# The library and emulator names the recipe promises are the CMake targets'.
src_cmake = open(os.path.join(root, "src", "CMakeLists.txt")).read()
emu_cmake = open(os.path.join(root, "src", "emulator", "CMakeLists.txt")).read()
if not re.search(r"add_library\(prism_e2b\b", src_cmake):
    fail("src/CMakeLists.txt has no prism_e2b library")
if not re.search(r"add_library\(prism_e2b_emulator STATIC", emu_cmake):
    fail("src/emulator/CMakeLists.txt has no static prism_e2b_emulator library")

# ---- vcpkg: the port's CMake calls and features -----------------------------------
port_dir = os.path.join(root, "ports", "prism-e2b")
manifest = json.load(open(os.path.join(port_dir, "vcpkg.json")))
portfile = open(os.path.join(port_dir, "portfile.cmake")).read()
if manifest.get("version") != version:
    fail(f"vcpkg.json version {manifest.get('version')} != project(VERSION) {version}")
if manifest.get("license") != recipe_cls.license:
    fail("vcpkg.json and conanfile.py disagree on the license")
for var in re.findall(r"-D(\w+)=", portfile):
    if var not in cmake_options | cmake_builtin:
        fail(f"portfile.cmake sets {var}, which CMakeLists.txt does not define")
features_block = re.search(r"vcpkg_check_features\((.*?)\)", portfile, re.S).group(1)
pairs = re.findall(r"^\s*([a-z-]+)\s+(PRISM_E2B_\w+)\s*$", features_block, re.M)
port_features = {f for f, _ in pairs}
if port_features != set(manifest.get("features", {})):
    fail(f"portfile features {sorted(port_features)} != vcpkg.json features {sorted(manifest.get('features', {}))}")
for f, var in pairs:
    if var not in cmake_options:
        fail(f"portfile feature {f} maps to {var}, which CMakeLists.txt does not define")
deps = {d if isinstance(d, str) else d["name"] for d in manifest["dependencies"]}
for needed in ("boost-asio", "boost-beast", "boost-json", "boost-url", "boost-system", "openssl", "vcpkg-cmake",
               "vcpkg-cmake-config"):
    if needed not in deps:
        fail(f"vcpkg.json lacks the dependency {needed}")
for call in ("vcpkg_cmake_configure", "vcpkg_cmake_install", "vcpkg_cmake_config_fixup", "vcpkg_fixup_pkgconfig",
             "vcpkg_install_copyright"):
    if call + "(" not in portfile:
        fail(f"portfile.cmake does not call {call}")
m = re.search(r"vcpkg_cmake_config_fixup\(PACKAGE_NAME (\w+) CONFIG_PATH ([\w/]+)\)", portfile)
install_cmake = open(os.path.join(root, "cmake", "install.cmake")).read()
if not m or m.group(1) != "prism_e2b" or "/cmake/prism_e2b" not in install_cmake:
    fail("portfile.cmake's config fixup does not match where cmake/install.cmake puts the package")
if not os.path.isfile(os.path.join(port_dir, "../../LICENSE")):
    fail("the port's copyright file (LICENSE) does not exist")

if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print(f"conanfile.py and ports/prism-e2b agree with CMakeLists.txt (version {version}, "
      f"{len(recipe_cls.exports_sources)} export patterns, {len(pairs)} port features)")
