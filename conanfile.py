"""Conan 2 recipe for adx, a header-only C++20 automatic-differentiation library.

    conan create . -pr:a conan/profiles/debian12     # Boost and OpenBLAS from Debian
    conan create . -pr:a <profile> -o "adx/*:with_blas=False"

Consumers get, through CMakeDeps, find_package(adx CONFIG) and the target adx::adx (include
directory, ADX_WITH_BLAS=0/1, ADX_WITH_LAPACK=0/1 and ADX_WITH_SLEEF=0/1, Boost, CBLAS, LAPACKE
with with_lapack=True and SLEEF with with_sleef=True).

Boost and OpenBLAS may come from Conan packages or from the system ([platform_requires] in the
profile, as in conan/profiles/debian12). Conan generates no CMake files for a platform
requirement, so the CMakeDeps config of adx includes small build modules
(cmake/conan/adxConanBoost.cmake, adxConanCBLAS.cmake): each links adx::adx to the dependency
Conan already provided, or, when Conan provided none, finds the system one the way adx's own
adxConfig.cmake does (find_package(Boost), adxFindLibraries.cmake). With with_lapack=True (the
default, and only with with_blas=True) adxConanLAPACKE.cmake does the same for LAPACKE: Conan's
openblas, built with build_lapack=True, has it inside; with openblas from the system it is the
system's LAPACKE (Debian: liblapacke-dev). With with_sleef=True adxConanSLEEF.cmake finds the
system SLEEF (adxFindLibraries.cmake).

adx/eigen.hpp, the optional Eigen interop, includes Eigen's headers: Eigen is not a requirement of
this package, and a consumer that includes that header brings its own Eigen (3.3 or later).
"""
import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load

required_conan_version = ">=2.0.17"  # the oldest checked (2.0.17 and 2.34 both pass test_package)


class AdxConan(ConanFile):
    name = "adx"
    description = ("Header-only C++20 automatic differentiation with expression templates; optional Eigen interop "
                   "(adx/eigen.hpp, with an Eigen the consumer provides)")
    license = "MIT"
    topics = ("automatic-differentiation", "autodiff", "expression-templates", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    # with_sleef: SLEEF's vector functions in the tensor loops over double (found on the system:
    # libsleef-dev); off by default, as no Conan package of SLEEF is used here.
    # with_lapack: float/double factorizations (adx::linalg) through LAPACKE; it needs with_blas
    # (without it the option does not exist).
    options = {"with_blas": [True, False], "with_lapack": [True, False], "with_sleef": [True, False]}
    default_options = {"with_blas": True, "with_lapack": True, "with_sleef": False}
    exports_sources = "include/*", "cmake/*", "CMakeLists.txt", "LICENSE"
    no_copy_source = True

    def set_version(self):
        # The version lives in one place, include/adx/config.hpp (CMake reads it there too).
        config = load(self, os.path.join(self.recipe_folder, "include", "adx", "config.hpp"))
        self.version = re.search(r'#define ADX_VERSION_STRING "([0-9.]+)"', config).group(1)

    def configure(self):
        if not self.options.with_blas:
            self.options.rm_safe("with_lapack")
        elif self.options.with_lapack:
            # LAPACKE comes inside Conan's openblas only when it builds LAPACK (no effect when
            # openblas is a [platform_requires])
            self.options["openblas"].build_lapack = True

    def requirements(self):
        # adx's public headers include Boost's and cblas.h, and a BLAS must be linked by whoever
        # links adx: both go through to consumers.
        self.requires("boost/[>=1.74 <2]", transitive_headers=True)
        if self.options.with_blas:
            self.requires("openblas/[>=0.3.21 <1]", transitive_headers=True, transitive_libs=True)

    def validate(self):
        check_min_cppstd(self, 20)
        if self.options.get_safe("with_lapack") and "openblas" in self.dependencies:
            build_lapack = self.dependencies["openblas"].options.get_safe("build_lapack")
            if build_lapack is not None and not build_lapack:
                raise ConanInvalidConfiguration(
                    "adx with_lapack=True needs LAPACKE from openblas: -o \"openblas/*:build_lapack=True\", "
                    "or -o \"adx/*:with_lapack=False\"")

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
        with_lapack = bool(self.options.get_safe("with_lapack", False))
        with_sleef = bool(self.options.with_sleef)
        self.cpp_info.defines = [f"ADX_WITH_BLAS={int(with_blas)}", f"ADX_WITH_LAPACK={int(with_lapack)}",
                                 f"ADX_WITH_SLEEF={int(with_sleef)}"]
        if with_sleef:  # for consumers that do not read the CMake build module (pkg-config)
            self.cpp_info.system_libs = ["sleef"]
        modules = (["adxConanBoost.cmake"] + (["adxConanCBLAS.cmake"] if with_blas else []) +
                   (["adxConanLAPACKE.cmake"] if with_lapack else []) +
                   (["adxConanSLEEF.cmake"] if with_sleef else []))
        self.cpp_info.set_property("cmake_build_modules",
                                   [os.path.join(self._cmake_modules_dir, m) for m in modules])
