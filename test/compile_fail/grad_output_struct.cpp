// expect: such an output cannot be differentiated
#include <adx/adx.hpp>
#include <array>
int main() {
  // a std::array of outputs is none of the structures grad takes apart: a diagnostic, not a zero
  auto g = adx::grad([](auto const& x) {
    using V = std::remove_cvref_t<decltype(x)>;
    return std::array<V, 2>{V(x * x), x};
  });
  (void)g(2.0);
}
