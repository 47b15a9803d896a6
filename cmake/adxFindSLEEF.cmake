# Finds SLEEF (vectorised elementary functions) and defines an imported target adx::sleef.
# Used by the build tree, the installed adxConfig.cmake and the Conan package alike.
#
#   adx_find_sleef(<out_var>)   sets <out_var> to adx::sleef, or to "" when SLEEF is not found
#                               (the caller decides whether that is an error)
function(adx_find_sleef out_target)
  if(NOT TARGET adx::sleef)
    find_path(ADX_SLEEF_INCLUDE_DIR sleef.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu)
    find_library(ADX_SLEEF_LIBRARY NAMES sleef)
    if(NOT ADX_SLEEF_INCLUDE_DIR OR NOT ADX_SLEEF_LIBRARY)
      set(${out_target} "" PARENT_SCOPE)
      return()
    endif()
    add_library(adx::sleef INTERFACE IMPORTED GLOBAL)
    set_target_properties(adx::sleef PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${ADX_SLEEF_INCLUDE_DIR}"
                                                 INTERFACE_LINK_LIBRARIES "${ADX_SLEEF_LIBRARY}")
  endif()
  set(${out_target} adx::sleef PARENT_SCOPE)
endfunction()

set(ADX_SLEEF_NOT_FOUND_MESSAGE
    "adx: ADX_WITH_SLEEF=ON but SLEEF was not found (sleef.h and libsleef). Install it (Debian: apt-get install libsleef-dev), point CMAKE_PREFIX_PATH at it, or configure adx with -DADX_WITH_SLEEF=OFF.")
