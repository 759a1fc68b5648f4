"""Conan 2 recipe for sgmatch (header-only).

    conan create . --profile:host=conan/profiles/debian12 --profile:build=conan/profiles/debian12
                                                         # every dependency from Debian 12, offline
    conan create . --build=missing                       # dependencies from a Conan remote (with a
                                                         # C++17 profile, xtensor < 0.26 is asked for)
    conan create . -o "sgmatch/*:with_onednn=False"      # core (+ reference) only
    conan create . -o "sgmatch/*:with_onnx=True"         # with the ONNX front end

CMake consumers use sgmatch's own installed CMake package (cmake_find_mode "none" below): its
find_dependency calls bring in Boost, oneDNN and xtensor, including link flags of a system
oneDNN that Conan's generated files would not carry. PkgConfigDeps writes one .pc file per part
(sgmatch, sgmatch-onednn, sgmatch-reference, sgmatch-onnx: package_info's components, each
requiring the parts and dependencies it needs). See README, "Install and use".
"""
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd, valid_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

# 2.0.15: [platform_requires] in profiles (conan/profiles/debian12, system-onednn).
required_conan_version = ">=2.0.15"


class SgmatchConan(ConanFile):
    name = "sgmatch"
    description = "Compile-time subgraph patterns, fusion and oneDNN kernels for deep-learning graphs"
    license = "Apache-2.0"
    topics = ("graph-rewriting", "pattern-matching", "onednn", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"with_onednn": [True, False], "with_reference": [True, False], "with_onnx": [True, False]}
    # The ONNX front end brings libonnx and protobuf: off unless asked for.
    default_options = {"with_onednn": True, "with_reference": True, "with_onnx": False}
    exports_sources = "CMakeLists.txt", "VERSION", "LICENSE", "cmake/*", "include/*"
    no_copy_source = True

    def set_version(self):
        # One version for CMake, this recipe and the vcpkg port: the VERSION file.
        self.version = load(self, os.path.join(self.recipe_folder, "VERSION")).strip()

    def layout(self):
        cmake_layout(self)

    def configure(self):
        # Boost is needed for Hana only: header-only.
        self.options["boost/*"].header_only = True

    def validate(self):
        # Refuses a profile whose compiler.cppstd is below 17 (ConanInvalidConfiguration).
        check_min_cppstd(self, 17)
        # xtensor 0.26 and later need C++20 (sgmatch's headers include either header layout).
        # requirements() asks for an older one under a C++17 profile; a [platform_requires]
        # xtensor is not in self.dependencies (build()'s dependency check compiles against it).
        if self.options.with_reference:
            xtensor = self._dependency("xtensor")
            if xtensor is not None and xtensor.ref.version >= "0.26":
                check_min_cppstd(self, 20)

    def _dependency(self, name):
        # A [platform_requires] dependency is not in self.dependencies (Conan's documented
        # behaviour): None for it.
        try:
            return self.dependencies[name]
        except KeyError:
            return None

    def requirements(self):
        self.requires("boost/[>=1.71 <2]", transitive_headers=True)
        if self.options.with_onednn:
            # ConanCenter may not offer a usable oneDNN: provide your own recipe, or a system
            # oneDNN through [platform_requires] in a profile (conan/profiles/system-onednn).
            self.requires("onednn/[>=2.6 <4]", transitive_headers=True, transitive_libs=True)
        if self.options.with_reference:
            # xtensor 0.26 and later need C++20: a profile below it gets the newest older one.
            if valid_min_cppstd(self, 20):
                self.requires("xtensor/[>=0.24 <0.28]", transitive_headers=True)
            else:
                self.requires("xtensor/[>=0.24 <0.26]", transitive_headers=True)
        if self.options.with_onnx:
            self.requires("onnx/[>=1.12 <2]", transitive_headers=True, transitive_libs=True)
            self.requires("protobuf/[>=3.21 <6]", transitive_headers=True, transitive_libs=True)

    def package_id(self):
        # Header-only: settings do not change the package; the options do (which parts the
        # installed CMake package offers).
        self.info.settings.clear()

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["SGMATCH_BUILD_TESTS"] = False
        tc.cache_variables["SGMATCH_BUILD_EXAMPLES"] = False
        tc.cache_variables["SGMATCH_BUILD_BENCHMARKS"] = False
        tc.cache_variables["SGMATCH_INSTALL"] = True
        # A program per part compiled and linked against the dependencies Conan resolved: a
        # version the headers do not fit fails here (cmake/check/), not in the user's build.
        tc.cache_variables["SGMATCH_CHECK_DEPENDENCIES"] = True
        tc.cache_variables["SGMATCH_WITH_ONEDNN"] = bool(self.options.with_onednn)
        tc.cache_variables["SGMATCH_WITH_REFERENCE"] = bool(self.options.with_reference)
        tc.cache_variables["SGMATCH_WITH_ONNX"] = bool(self.options.with_onnx)
        # The TorchScript host needs a Torch that Conan does not provide: never one found on the
        # build machine by chance (its CMake package would then require Torch of every consumer).
        tc.cache_variables["SGMATCH_WITH_TORCH"] = "OFF"
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        rmdir(self, os.path.join(self.package_folder, "share", "doc"))  # the LICENSE, once, in licenses/

    def package_info(self):
        # Use sgmatch's own package files (share/cmake/sgmatch), not generated ones.
        self.cpp_info.set_property("cmake_find_mode", "none")
        # One component per part, for PkgConfigDeps (and any generator but CMakeDeps, which the
        # package's own CMake files replace): sgmatch.pc, sgmatch-onednn.pc, ... each requiring
        # the parts and dependencies it needs.
        core = self.cpp_info.components["core"]
        core.set_property("pkg_config_name", "sgmatch")
        core.requires = ["boost::headers"] if self._dependency("boost") is not None else []
        core.bindirs = []
        core.libdirs = []
        core.builddirs = [os.path.join("share", "cmake", "sgmatch")]  # where CMake finds the package
        # Each part: the dependencies it requires, and the libraries to link by name where such a
        # dependency is the system's ([platform_requires]: Conan has no files of its own for it).
        parts = {"onednn": (self.options.with_onednn, {"onednn::onednn": ["dnnl"]}),
                 "reference": (self.options.with_reference, {"xtensor::xtensor": []}),
                 "onnx": (self.options.with_onnx, {"onnx::onnx": ["onnx", "onnx_proto"],
                                                   "protobuf::libprotobuf": ["protobuf"]})}
        for part, (enabled, deps) in parts.items():
            if not enabled:
                continue
            c = self.cpp_info.components[part]
            c.set_property("pkg_config_name", "sgmatch-" + part)
            c.requires = ["core"]
            for dep, system_libs in deps.items():
                if self._dependency(dep.split("::")[0]) is not None:
                    c.requires.append(dep)
                else:
                    c.system_libs += system_libs
            c.bindirs = []
            c.libdirs = []
            if part == "onnx":
                c.defines = ["ONNX_NAMESPACE=onnx", "ONNX_ML=1"]
