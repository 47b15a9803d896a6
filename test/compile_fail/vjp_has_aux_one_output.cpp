// expect: When 'has_aux' is True, origin 'fn' requires more than one outputs
#include <adx/adx.hpp>
int main() {
  adx::tensor<double> const x{1.0, 2.0};
  (void)adx::vjp([](auto const& t) { return adx::eval(t * t); }, x, adx::has_aux);
}
