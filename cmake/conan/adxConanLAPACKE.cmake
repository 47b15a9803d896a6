# Build module of adx's Conan package, with_lapack=True only. When Conan's openblas package is in
# the graph, CMakeDeps already linked it to adx::adx, and it has LAPACKE inside (the recipe asks
# for build_lapack=True); when openblas is a [platform_requires], find the system LAPACKE as adx's
# own adxConfig.cmake does and link it.
if(NOT TARGET OpenBLAS::OpenBLAS AND NOT TARGET openblas::openblas)
  include("${CMAKE_CURRENT_LIST_DIR}/adxFindLibraries.cmake")
  adx_find_lapacke(_adx_lapacke_target)
  if(NOT _adx_lapacke_target)
    message(FATAL_ERROR "${ADX_LAPACKE_NOT_FOUND_MESSAGE}")
  endif()
  target_link_libraries(adx::adx INTERFACE ${_adx_lapacke_target})
endif()
