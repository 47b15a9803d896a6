# Finds a CBLAS (OpenBLAS first) and defines an imported target adx::cblas.
# Used by the build tree and by the installed adxConfig.cmake alike.
#
#   adx_find_cblas(<out_var>)   sets <out_var> to adx::cblas, or to "" when no CBLAS is found
#                               (the caller decides whether that is an error)
function(adx_find_cblas out_target)
  if(NOT TARGET adx::cblas)
    find_path(ADX_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu aarch64-linux-gnu)
    find_library(ADX_CBLAS_LIBRARY NAMES openblas cblas blas)
    if(NOT ADX_CBLAS_INCLUDE_DIR OR NOT ADX_CBLAS_LIBRARY)
      set(${out_target} "" PARENT_SCOPE)
      return()
    endif()
    add_library(adx::cblas INTERFACE IMPORTED GLOBAL)
    set_target_properties(adx::cblas PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ADX_CBLAS_INCLUDE_DIR}"
                                                 INTERFACE_LINK_LIBRARIES "${ADX_CBLAS_LIBRARY}")
  endif()
  set(${out_target} adx::cblas PARENT_SCOPE)
endfunction()

set(ADX_CBLAS_NOT_FOUND_MESSAGE
    "adx: ADX_WITH_BLAS=ON but no CBLAS was found (cblas.h and libopenblas). Install it (Debian: apt-get install libopenblas-dev), point CMAKE_PREFIX_PATH at it, or configure adx with -DADX_WITH_BLAS=OFF.")
