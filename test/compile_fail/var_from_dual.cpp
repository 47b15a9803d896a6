// expect: a var<T> cannot be made from a dual
#include <adx/adx.hpp>
int main() {
  adx::dual<double> d(1.0, 1.0);
  adx::var<double> v = d;
  (void)v;
}
