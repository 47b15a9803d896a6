# Build module of adx's Conan package, with_blas=True only. When Conan's openblas package is in
# the graph, CMakeDeps already linked it to adx::adx; when openblas is a [platform_requires],
# find the system CBLAS as adx's own adxConfig.cmake does and link it.
if(NOT TARGET OpenBLAS::OpenBLAS AND NOT TARGET openblas::openblas)
  include("${CMAKE_CURRENT_LIST_DIR}/adxFindLibraries.cmake")
  adx_find_cblas(_adx_cblas_target)
  if(NOT _adx_cblas_target)
    message(FATAL_ERROR "${ADX_CBLAS_NOT_FOUND_MESSAGE}")
  endif()
  target_link_libraries(adx::adx INTERFACE ${_adx_cblas_target})
endif()
