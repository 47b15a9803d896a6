// adx Conan test_package: z = x*x*y at (2, 3) by reverse mode must give dz/dx = 12, dz/dy = 4.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>

#if ADX_WITH_BLAS
#include <cblas.h>
#endif
#if ADX_WITH_SLEEF
#include <sleef.h>
#endif

int main() {
  int failures = 0;
  {
    adx::tape_scope<adx::var<double>> scope;
    adx::var<double> x = 2.0, y = 3.0;
    adx::var<double> z = x * x * y;
    adx::backward(z);
    std::printf("adx %s: z = x*x*y at (2, 3): dz/dx = %g, dz/dy = %g\n", ADX_VERSION_STRING, x.adjoint(), y.adjoint());
    failures += x.adjoint() != 12.0;
    failures += y.adjoint() != 4.0;
  }
  std::printf("ADX_WITH_BLAS = %d (expected %d)\n", ADX_WITH_BLAS, ADX_EXPECT_BLAS);
  failures += ADX_WITH_BLAS != ADX_EXPECT_BLAS;
#if ADX_WITH_BLAS
  double const a[2] = {1.0, 2.0}, b[2] = {3.0, 4.0};
  failures += cblas_ddot(2, a, 1, b, 1) != 11.0;  // the package brought a linkable CBLAS
#endif
  std::printf("ADX_WITH_SLEEF = %d (expected %d)\n", ADX_WITH_SLEEF, ADX_EXPECT_SLEEF);
  failures += ADX_WITH_SLEEF != ADX_EXPECT_SLEEF;
#if ADX_WITH_SLEEF
  failures += std::abs(Sleef_exp_u10(1.0) - std::exp(1.0)) > 1e-15;  // and a linkable SLEEF
#endif
  std::printf("%s\n", failures == 0 ? "test_package: ok" : "test_package: FAILED");
  return failures == 0 ? 0 : 1;
}
