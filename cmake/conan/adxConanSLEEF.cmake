# Build module of adx's Conan package, with_sleef=True only: finds the system's SLEEF as adx's
# own adxConfig.cmake does and links it to adx::adx.
include("${CMAKE_CURRENT_LIST_DIR}/adxFindLibraries.cmake")
adx_find_sleef(_adx_sleef_target)
if(NOT _adx_sleef_target)
  message(FATAL_ERROR "${ADX_SLEEF_NOT_FOUND_MESSAGE}")
endif()
target_link_libraries(adx::adx INTERFACE ${_adx_sleef_target})
