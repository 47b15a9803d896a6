# Install rules: headers, the exported target adx::adx and a package config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/adx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS adx EXPORT adxTargets)
install(EXPORT adxTargets NAMESPACE adx:: DESTINATION ${CMAKE_INSTALL_DATADIR}/cmake/adx)
export(EXPORT adxTargets NAMESPACE adx:: FILE ${PROJECT_BINARY_DIR}/adxTargets.cmake)

configure_package_config_file(cmake/adxConfig.cmake.in ${PROJECT_BINARY_DIR}/adxConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_DATADIR}/cmake/adx)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/adxConfigVersion.cmake COMPATIBILITY SameMinorVersion
                                 ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/adxConfig.cmake ${PROJECT_BINARY_DIR}/adxConfigVersion.cmake
              cmake/adxFindCBLAS.cmake DESTINATION ${CMAKE_INSTALL_DATADIR}/cmake/adx)
