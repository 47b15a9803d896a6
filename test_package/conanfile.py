# Conan test_package: builds a small program against the freshly created adx package through
# CMakeDeps + CMakeToolchain and runs it (it checks a reverse-mode gradient and exits nonzero
# when a value is wrong).
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout


class AdxTestPackageConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        tc = CMakeToolchain(self)
        # what the program must see in ADX_WITH_BLAS and ADX_WITH_SLEEF
        tc.cache_variables["ADX_EXPECT_BLAS"] = bool(self.dependencies["adx"].options.with_blas)
        tc.cache_variables["ADX_EXPECT_SLEEF"] = bool(self.dependencies["adx"].options.with_sleef)
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
