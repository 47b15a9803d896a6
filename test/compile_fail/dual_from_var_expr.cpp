// expect: a dual<T> cannot be made from a var
#include <adx/adx.hpp>
int main() {
  adx::var<double> x = 1.0;
  adx::dual<double> d = x * x;
  (void)d;
}
