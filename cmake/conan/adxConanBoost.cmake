# Build module of adx's Conan package (included by the adx-config.cmake CMakeDeps generates).
# Links adx::adx to Boost's headers: Conan's boost package when there is one (CMakeDeps made
# Boost::headers before this runs), otherwise the system Boost, which is what a profile's
# [platform_requires] boost/... stands for.
if(NOT TARGET Boost::headers)
  find_package(Boost 1.74 REQUIRED)
endif()
target_link_libraries(adx::adx INTERFACE Boost::headers)
