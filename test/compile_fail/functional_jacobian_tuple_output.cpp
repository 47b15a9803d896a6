// expect: take a function with one output
#include <adx/adx.hpp>
#include <tuple>
int main() {
  // two outputs in a tuple: a diagnostic that says so, not a failed conversion deep inside
  auto f = [](auto const& x) { return std::make_tuple(adx::eval(x * x), adx::sum(x)); };
  (void)adx::functional::jacobian(f, adx::tensor<double>{1.0, 2.0});
}
