// Tapes are per thread: several threads record and sweep their own tapes at the same time,
// in every nesting, scalar and tensor, and get exactly what one thread alone gets.
// scripts/dev.sh tsan runs these tests under ThreadSanitizer.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <array>
#include <atomic>
#include <latch>
#include <thread>

#include "support/check.hpp"
#include "support/programs.hpp"
#include "support/tensor_programs.hpp"

using namespace adx;

TEST_CASE("threads: four threads, each its own tape, results checked") {
  std::atomic<int> failures{0}, done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([t, &failures, &done] {
      for (int rep = 0; rep < 200; ++rep) {
        double const a = 0.1 * (t + 1) + 0.001 * rep;
        tape_scope<var<var<double>>> scope;
        var<var<double>> x = a;
        var<var<double>> y = exp(x) * sin(x) * (t + 1);
        backward(y);
        var<double> g = x.adjoint();
        backward(g);
        double const h = x.value().adjoint();
        double const g_want = (t + 1) * std::exp(a) * (std::sin(a) + std::cos(a));
        double const h_want = (t + 1) * 2 * std::exp(a) * std::cos(a);
        if (!adx_test::close(primal(g), g_want, 1e-13, 1e-13) || !adx_test::close(h, h_want, 1e-13, 1e-13)) ++failures;
      }
      ++done;
    });
  }
  for (auto& th : pool) th.join();
  CHECK(done == 4);
  CHECK(failures == 0);
}

namespace {

namespace pg = adx_test::programs;
namespace tp = adx_test::tensor_programs;

constexpr int n_threads = 8;
constexpr int rounds = 8;

/// Everything a thread computes for one scalar program with tapes: var, var<var>, var<dual>,
/// dual<var> (value, gradient, Hessian), flattened.
std::vector<double> scalar_results(pg::program const& p) {
  std::vector<double> out;
  for (auto const& d : {pg::reverse_gradient(p, p.x), pg::hessian_var_var(p, p.x), pg::hessian_var_dual(p, p.x),
                        pg::hessian_dual_var(p, p.x)}) {
    out.push_back(d.value);
    out.insert(out.end(), d.grad.begin(), d.grad.end());
    out.insert(out.end(), d.hess.begin(), d.hess.end());
  }
  return out;
}

/// The tensor<var<double>> gradient and the tensor<var<dual<double>>> Hessian-vector product.
std::vector<double> tensor_results(tp::tprogram const& p) {
  auto const d = tp::reverse_gradient(p, p.x);
  std::vector<double> out{d.value};
  out.insert(out.end(), d.grad.begin(), d.grad.end());
  std::vector<double> v(d.grad.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0 / static_cast<double>(i + 1);
  auto const hv = tp::hvp(p, p.x, v);
  out.insert(out.end(), hv.begin(), hv.end());
  return out;
}

/// Runs `work(thread, round)` for n_rounds rounds on n_threads threads released at the same moment.
template <class F>
void at_once(F const& work, int n_rounds) {
  std::latch start(n_threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < n_threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int r = 0; r < n_rounds; ++r) work(t, r);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

TEST_CASE("threads: eight threads record and sweep random scalar programs in every nesting at once") {
  // the programs and what one thread computes for them, first
  std::size_t const n = 64;
  std::vector<pg::program> programs;
  std::vector<std::vector<double>> want;
  for (std::size_t k = 0; k < n; ++k) {
    pg::rng_source src(1000 + k);
    programs.push_back(pg::generate(src));
    want.push_back(scalar_results(programs.back()));
  }
  std::atomic<int> checked{0}, different{0};
  at_once(
      [&](int t, int r) {
        for (std::size_t i = 0; i < n; ++i) {
          std::size_t const k = (i + static_cast<std::size_t>(t) * 7 + static_cast<std::size_t>(r)) % n;
          // inside an outer recording of this thread's own, which must be left as it was
          tape_scope<var<double>> outer;
          var<double> before = 0.5;
          var<double> z = before * before;
          if (scalar_results(programs[k]) != want[k]) ++different;
          backward(z);
          if (before.adjoint() != 1.0) ++different;
          ++checked;
        }
      },
      rounds);
  MESSAGE("threads: " << n_threads << " threads checked " << checked.load() << " scalar programs (var, var<var>, "
                      << "var<dual>, dual<var>) against one thread's results");
  CHECK(checked == n_threads * static_cast<int>(n) * rounds);
  CHECK(different == 0);
}

TEST_CASE("threads: eight threads record and sweep random tensor programs at once") {
  std::size_t const n = 64;
  std::vector<tp::tprogram> programs;
  std::vector<std::vector<double>> want;
  for (std::size_t k = 0; k < n; ++k) {
    tp::rng_source src(2000 + k);
    programs.push_back(tp::generate(src));
    want.push_back(tensor_results(programs.back()));
  }
  std::atomic<int> checked{0}, different{0};
  at_once(
      [&](int t, int r) {
        for (std::size_t i = 0; i < n; ++i) {
          std::size_t const k = (i + static_cast<std::size_t>(t) * 5 + static_cast<std::size_t>(r)) % n;
          if (tensor_results(programs[k]) != want[k]) ++different;
          ++checked;
        }
      },
      rounds);
  MESSAGE("threads: " << n_threads << " threads checked " << checked.load()
                      << " tensor programs (tensor<var>, tensor<var<dual>>) against one thread's results");
  CHECK(checked == n_threads * static_cast<int>(n) * rounds);
  CHECK(different == 0);
}

TEST_CASE("threads: a var recorded on one thread is refused by another thread's tape") {
  tape_scope<var<double>> scope;
  var<double> x = 1.0;
  bool threw = false;
  std::thread other([&] {
    try {
      var<double> y = x * 2.0;
      (void)y;
    } catch (stale_variable_error const&) {
      threw = true;
    }
  });
  other.join();
  CHECK(threw);
}

TEST_CASE("threads: the elements of a tensor of vars kept as values are made once when threads read them at once") {
  tape_scope<var<double>> scope;
  tensor<double> const x0 = random_normal({64, 8}, 9);
  tensor<var<double>> const x(x0);  // kept as values: no element made yet
  std::array<var<double> const*, 4> seen{};
  std::array<double, 4> sums{};
  std::latch start(4);
  std::vector<std::thread> readers;
  for (std::size_t t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      start.arrive_and_wait();
      seen[t] = x.data();  // reading only: no recording on this thread's tape
      for (std::size_t i = 0; i < x.size(); ++i) sums[t] += x[i].value() * static_cast<double>(i % 7);
    });
  for (auto& r : readers) r.join();
  double want = 0;
  for (std::size_t i = 0; i < x0.size(); ++i) want += x0[i] * static_cast<double>(i % 7);
  for (std::size_t t = 0; t < 4; ++t) {
    CHECK(seen[t] == seen[0]);
    CHECK(sums[t] == want);
  }
  CHECK(x(63, 7).index() == x(0, 0).index() + 511);
}

// A parameter joins the registry of the thread that made it, which the gradient APIs walk. One
// destroyed on another thread used to leave a dangling pointer there (the destroying thread
// removed it from its own list), which the next grad on the making thread followed.
TEST_CASE("threads: a parameter destroyed on another thread leaves its own thread's registry") {
  using namespace adx;
  auto p = std::make_unique<parameter<double>>(tensor<double>{1.0, 2.0}, "w");
  parameter<double> const kept(tensor<double>{3.0}, "kept");
  std::thread([&] { p.reset(); }).join();
  auto f = [](auto const& x) { return sum(x * x); };
  tensor<double> const g = grad(f)(tensor<double>{1.0, 2.0});  // walks this thread's registry
  CHECK(g(0) == 2.0);
  CHECK(g(1) == 4.0);
  // the registry still holds the parameter that lives: backward accumulates into it
  {
    tape_scope<var<double>> scope;
    var<double> y = sum(kept * kept);
    autograd::backward(y);
  }
  REQUIRE(kept.grad().has_value());
  CHECK((*kept.grad())(0) == 6.0);
  // and one made on a thread that has ended is destroyed here without touching freed memory
  std::unique_ptr<parameter<double>> orphan;
  std::thread([&] { orphan = std::make_unique<parameter<double>>(tensor<double>{1.0}); }).join();
  orphan.reset();
}
