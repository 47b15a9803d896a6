// expect: has_aux and return_ids are compile-time flags
#include <adx/adx.hpp>
int main() {
  adx::tensor<double> const x{1.0, 2.0};
  (void)adx::jvp([](auto const& t) { return adx::eval(t * t); }, x, x, true);
}
