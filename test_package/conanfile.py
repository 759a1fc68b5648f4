import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class SgmatchTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        o = self.dependencies["sgmatch"].options
        cmake.configure(variables={"SGMATCH_TEST_ONEDNN": bool(o.with_onednn),
                                   "SGMATCH_TEST_REFERENCE": bool(o.with_reference),
                                   "SGMATCH_TEST_ONNX": bool(o.with_onnx)})
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
