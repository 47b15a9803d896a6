// adx consumer check: what a project that pulled adx in (find_package, add_subdirectory,
// FetchContent) sees. Computes real derivatives and exits nonzero on any mismatch. The consumer's
// CMakeLists defines ADX_CONSUMER_EXPECT_BLAS (0 or 1) and ADX_CONSUMER_EXPECT_VERSION.
#include <adx/adx.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#if ADX_WITH_BLAS
#include <cblas.h>
#endif

#ifndef ADX_CONSUMER_EXPECT_BLAS
#error "the consumer's CMakeLists must define ADX_CONSUMER_EXPECT_BLAS"
#endif

namespace {
int failures = 0;
void check(char const* what, double got, double want) {
  bool const ok = std::fabs(got - want) <= 1e-12 * (1.0 + std::fabs(want));
  std::printf("%-40s %12.6f (want %12.6f) %s\n", what, got, want, ok ? "ok" : "WRONG");
  failures += !ok;
}
}  // namespace

int main() {
  std::printf("adx %s consumer (ADX_WITH_BLAS=%d)\n", ADX_VERSION_STRING, ADX_WITH_BLAS);
  {  // reverse mode: z = x*x*y at (2, 3), dz/dx = 2xy = 12, dz/dy = x^2 = 4
    adx::tape_scope<adx::var<double>> scope;
    adx::var<double> x = 2.0, y = 3.0;
    adx::var<double> z = x * x * y;
    adx::backward(z);
    check("reverse: z", z.value(), 12.0);
    check("reverse: dz/dx", x.adjoint(), 12.0);
    check("reverse: dz/dy", y.adjoint(), 4.0);
  }
  {  // forward mode: d/dx x*sin(x) = sin(x) + x cos(x)
    adx::dual<double> x(0.7, 1.0);
    adx::dual<double> f = x * sin(x);
    check("forward: d/dx x sin x at 0.7", f.tangent(), std::sin(0.7) + 0.7 * std::cos(0.7));
  }
  {  // whole-function helper: gradient of v0 * exp(v1)
    auto g = adx::gradient([](auto const& v) { return v[0] * exp(v[1]); }, std::vector{0.5, -0.3});
    check("gradient(): d/dv0 v0 exp(v1)", g.at(0), std::exp(-0.3));
    check("gradient(): d/dv1 v0 exp(v1)", g.at(1), 0.5 * std::exp(-0.3));
  }
  {  // tensors: d/dx sum(x y) = rows of y summed; the product goes through adx's GEMM dispatch,
     // which is CBLAS when ADX_WITH_BLAS is 1 (so this also checks that adx's own BLAS call links)
    adx::tape_scope<adx::var<double>> scope;
    adx::tensor<adx::var<double>> x(adx::tensor<double>{{0.5, 0.6, 0.4}, {1.2, 1.3, 1.1}});
    adx::tensor<adx::var<double>> y(adx::tensor<double>{{0.01, 0.3, 1.1}, {0.1, 0.2, 1.3}, {2.1, 1.2, 3.3}});
    adx::var<double> out = sum(matmul(x, y));
    adx::backward(out);
    check("tensor: d sum(x y) / dx(1, 2)", x(1, 2).adjoint(), 2.1 + 1.2 + 3.3);
    check("tensor: d sum(x y) / dy(0, 1)", y(0, 1).adjoint(), 0.5 + 1.2);
  }
  if (ADX_WITH_BLAS != ADX_CONSUMER_EXPECT_BLAS) {
    std::printf("ADX_WITH_BLAS is %d but this consumer expects %d\n", ADX_WITH_BLAS, ADX_CONSUMER_EXPECT_BLAS);
    ++failures;
  }
#if ADX_WITH_BLAS
  {  // the target brought cblas.h and the library along
    double const a[3] = {1.0, 2.0, 3.0}, b[3] = {4.0, 5.0, 6.0};
    check("cblas_ddot through adx::adx", cblas_ddot(3, a, 1, b, 1), 32.0);
  }
#endif
#ifdef ADX_CONSUMER_EXPECT_VERSION
  if (std::strcmp(ADX_VERSION_STRING, ADX_CONSUMER_EXPECT_VERSION) != 0) {
    std::printf("adx version %s, expected %s\n", ADX_VERSION_STRING, ADX_CONSUMER_EXPECT_VERSION);
    ++failures;
  }
#endif
  std::printf("%s\n", failures == 0 ? "consumer: all checks passed" : "consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
