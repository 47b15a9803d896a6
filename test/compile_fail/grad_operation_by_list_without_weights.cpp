// expect: GradOperation.get_by_list=True. needs the weights
#include <adx/adx.hpp>
int main() {
  auto g = adx::grad_operation<adx::grad_options{.get_by_list = true}>([](auto const& x) { return x * x; });
  (void)g;
}
