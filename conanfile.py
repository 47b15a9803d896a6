"""Conan 2 recipe for adx, a header-only C++20 automatic-differentiation library.

    conan create . -pr:a conan/profiles/debian12     # Boost and OpenBLAS from Debian
    conan create . -pr:a <profile> -o "adx/*:with_blas=False"

Consumers get, through CMakeDeps, find_package(adx CONFIG) and the target adx::adx (include
directory, ADX_WITH_BLAS=0/1 and ADX_WITH_SLEEF=0/1, Boost, CBLAS and, with with_sleef=True,
SLEEF).

Boost and OpenBLAS may come from Conan packages or from the system ([platform_requires] in the
profile, as in conan/profiles/debian12). Conan generates no CMake files for a platform
requirement, so the CMakeDeps config of adx includes small build modules
(cmake/conan/adxConanBoost.cmake, adxConanCBLAS.cmake): each links adx::adx to the dependency
Conan already provided, or, when Conan provided none, finds the system one the way adx's own
adxConfig.cmake does (find_package(Boost), adxFindLibraries.cmake). With with_sleef=True a third,
adxConanSLEEF.cmake, finds the system SLEEF (adxFindLibraries.cmake).
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load

required_conan_version = ">=2.0.17"  # the oldest checked (2.0.17 and 2.34 both pass test_package)


class AdxConan(ConanFile):
    name = "adx"
    description = "Header-only C++20 automatic differentiation with expression templates"
    license = "MIT"
    topics = ("automatic-differentiation", "autodiff", "expression-templates", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    # with_sleef: SLEEF's vector functions in the tensor loops over double (found on the system:
    # libsleef-dev); off by default, as no Conan package of SLEEF is used here.
    options = {"with_blas": [True, False], "with_sleef": [True, False]}
    default_options = {"with_blas": True, "with_sleef": False}
    exports_sources = "include/*", "cmake/*", "CMakeLists.txt", "LICENSE"
    no_copy_source = True

    def set_version(self):
        # The version lives in one place, include/adx/config.hpp (CMake reads it there too).
        config = load(self, os.path.join(self.recipe_folder, "include", "adx", "config.hpp"))
        self.version = re.search(r'#define ADX_VERSION_STRING "([0-9.]+)"', config).group(1)

    def requirements(self):
        # adx's public headers include Boost's and cblas.h, and a BLAS must be linked by whoever
        # links adx: both go through to consumers.
        self.requires("boost/[>=1.74 <2]", transitive_headers=True)
        if self.options.with_blas:
            self.requires("openblas/[>=0.3.21 <1]", transitive_headers=True, transitive_libs=True)

    def validate(self):
        check_min_cppstd(self, 20)

    def package_id(self):
        # Headers only: one package whatever the settings and options (with_blas only changes
        # package_info, which Conan evaluates for each consumer).
        self.info.clear()

    def package(self):
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", src=os.path.join(self.source_folder, "include"),
             dst=os.path.join(self.package_folder, "include"))
        cmake_dir = os.path.join(self.package_folder, self._cmake_modules_dir)
        copy(self, "adxFindLibraries.cmake", src=os.path.join(self.source_folder, "cmake"), dst=cmake_dir)
        copy(self, "*.cmake", src=os.path.join(self.source_folder, "cmake", "conan"), dst=cmake_dir)

    @property
    def _cmake_modules_dir(self):
        return os.path.join("lib", "cmake", "adx-conan")

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "adx")
        self.cpp_info.set_property("cmake_target_name", "adx::adx")
        self.cpp_info.set_property("pkg_config_name", "adx")
        with_blas = bool(self.options.with_blas)
        with_sleef = bool(self.options.with_sleef)
        self.cpp_info.defines = [f"ADX_WITH_BLAS={int(with_blas)}", f"ADX_WITH_SLEEF={int(with_sleef)}"]
        if with_sleef:  # for consumers that do not read the CMake build module (pkg-config)
            self.cpp_info.system_libs = ["sleef"]
        modules = (["adxConanBoost.cmake"] + (["adxConanCBLAS.cmake"] if with_blas else []) +
                   (["adxConanSLEEF.cmake"] if with_sleef else []))
        self.cpp_info.set_property("cmake_build_modules",
                                   [os.path.join(self._cmake_modules_dir, m) for m in modules])
