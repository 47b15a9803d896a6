# Finds the optional libraries adx links to and defines an imported target for each: adx::cblas
# (a CBLAS, OpenBLAS first), adx::lapacke (LAPACKE and the LAPACK it calls) and adx::sleef
# (vectorised elementary functions). Used by the build tree, the installed adxConfig.cmake and the
# Conan package's build modules alike.
#
#   adx_find_cblas(<out_var>)   sets <out_var> to adx::cblas, or to "" when no CBLAS is found
#   adx_find_lapacke(<out_var>) sets <out_var> to adx::lapacke, or to "" when LAPACKE is not found
#   adx_find_sleef(<out_var>)   sets <out_var> to adx::sleef, or to "" when SLEEF is not found
#
# (the caller decides whether a missing library is an error, with the messages below). The
# header and library found are cached as ADX_<NAME>_INCLUDE_DIR and ADX_<NAME>_LIBRARY, which a
# user may set to choose another installation (LAPACKE's LAPACK as ADX_LAPACK_LIBRARY).

# One header and one library as the INTERFACE IMPORTED target adx::<name>.
function(_adx_find_imported name header libraries suffixes out_target)
  string(TOUPPER "${name}" upper)
  if(NOT TARGET adx::${name})
    find_path(ADX_${upper}_INCLUDE_DIR ${header} PATH_SUFFIXES ${suffixes})
    find_library(ADX_${upper}_LIBRARY NAMES ${libraries})
    if(NOT ADX_${upper}_INCLUDE_DIR OR NOT ADX_${upper}_LIBRARY)
      set(${out_target} "" PARENT_SCOPE)
      return()
    endif()
    add_library(adx::${name} INTERFACE IMPORTED GLOBAL)
    set_target_properties(adx::${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ADX_${upper}_INCLUDE_DIR}"
                                                  INTERFACE_LINK_LIBRARIES "${ADX_${upper}_LIBRARY}")
  endif()
  set(${out_target} adx::${name} PARENT_SCOPE)
endfunction()

function(adx_find_cblas out_target)
  _adx_find_imported(cblas cblas.h "openblas;cblas;blas" "openblas;x86_64-linux-gnu;aarch64-linux-gnu" found)
  set(${out_target} "${found}" PARENT_SCOPE)
endfunction()

# LAPACKE: lapacke.h, liblapacke (or an OpenBLAS that has LAPACKE inside) and the LAPACK it
# calls (Debian: liblapack, which its alternatives point at OpenBLAS's).
function(adx_find_lapacke out_target)
  if(NOT TARGET adx::lapacke)
    find_path(ADX_LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES "openblas;x86_64-linux-gnu;aarch64-linux-gnu")
    find_library(ADX_LAPACKE_LIBRARY NAMES lapacke openblas)
    find_library(ADX_LAPACK_LIBRARY NAMES lapack openblas)
    if(NOT ADX_LAPACKE_INCLUDE_DIR OR NOT ADX_LAPACKE_LIBRARY OR NOT ADX_LAPACK_LIBRARY)
      set(${out_target} "" PARENT_SCOPE)
      return()
    endif()
    add_library(adx::lapacke INTERFACE IMPORTED GLOBAL)
    set_target_properties(adx::lapacke PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ADX_LAPACKE_INCLUDE_DIR}"
                          INTERFACE_LINK_LIBRARIES "${ADX_LAPACKE_LIBRARY};${ADX_LAPACK_LIBRARY}")
  endif()
  set(${out_target} adx::lapacke PARENT_SCOPE)
endfunction()

function(adx_find_sleef out_target)
  _adx_find_imported(sleef sleef.h "sleef" "x86_64-linux-gnu;aarch64-linux-gnu" found)
  set(${out_target} "${found}" PARENT_SCOPE)
endfunction()

set(ADX_CBLAS_NOT_FOUND_MESSAGE
    "adx: ADX_WITH_BLAS=ON but no CBLAS was found (cblas.h and libopenblas). Install it (Debian: apt-get install libopenblas-dev), point CMAKE_PREFIX_PATH at it, or configure adx with -DADX_WITH_BLAS=OFF.")
set(ADX_LAPACKE_NOT_FOUND_MESSAGE
    "adx: ADX_WITH_LAPACK=ON but LAPACKE was not found (lapacke.h, liblapacke and liblapack). Install it (Debian: apt-get install liblapacke-dev), point CMAKE_PREFIX_PATH at it, or configure adx with -DADX_WITH_LAPACK=OFF.")
set(ADX_SLEEF_NOT_FOUND_MESSAGE
    "adx: ADX_WITH_SLEEF=ON but SLEEF was not found (sleef.h and libsleef). Install it (Debian: apt-get install libsleef-dev), point CMAKE_PREFIX_PATH at it, or configure adx with -DADX_WITH_SLEEF=OFF.")
