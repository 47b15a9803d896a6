# Install rules: headers, the exported target adx::adx and a package config with its version
# file, all under <prefix>/share/cmake/adx (adx is header-only, hence architecture-independent).
include(CMakePackageConfigHelpers)

set(ADX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_DATADIR}/cmake/adx CACHE STRING "Where adx's CMake package files go")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/adx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/adx)
install(TARGETS adx EXPORT adxTargets)
install(EXPORT adxTargets NAMESPACE adx:: DESTINATION ${ADX_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/adxConfig.cmake.in ${PROJECT_BINARY_DIR}/adxConfig.cmake
                              INSTALL_DESTINATION ${ADX_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/adxConfigVersion.cmake COMPATIBILITY SameMinorVersion
                                 ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/adxConfig.cmake ${PROJECT_BINARY_DIR}/adxConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/adxFindLibraries.cmake
        DESTINATION ${ADX_INSTALL_CMAKEDIR})

# The build tree is a usable package too (adx_DIR=<build dir>), without installing.
export(EXPORT adxTargets NAMESPACE adx:: FILE ${PROJECT_BINARY_DIR}/adxTargets.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/adxFindLibraries.cmake ${PROJECT_BINARY_DIR}/adxFindLibraries.cmake COPYONLY)
