// expect: deleted function.*operator new
// A tape_scope on the heap could end out of order: it cannot be made with new.
#include <adx/adx.hpp>
int main() {
  auto* s = new adx::tape_scope<adx::var<double>>;
  delete s;
}
