// Every rule of adx::all_binary_rules, in every mode and nesting combination, against each other
// and against finite differences up to the 2nd derivative. Adding a rule to the list is all it
// takes to have it tested here.
#include <doctest/doctest.h>

#include "rules/generic_support.hpp"

using namespace adx_test::rules;
using adx_test::close;

TEST_CASE("every binary rule agrees across modes and with finite differences to 2nd order") {
  int checked = 0;
  boost::mp11::mp_for_each<adx::all_binary_rules>([&](auto rule) {
    using Rule = decltype(rule);
    binary_fn<Rule> const f;
    for (auto const& point : {std::pair{0.7, 1.3}, {-0.4, 0.9}, {1.8, -0.7}, {2.2, 2.9}}) {
      double const x0 = point.first, y0 = point.second;  // (clang 14 cannot capture bindings)
      auto const modes = adx_test::binary_all_modes(f, x0, y0);
      auto const& r = modes[0];
      if (!std::isfinite(r.v) || !std::isfinite(r.gx) || !std::isfinite(r.gy) || !std::isfinite(r.hxx) ||
          !std::isfinite(r.hxy) || !std::isfinite(r.hyy))
        continue;
      INFO(std::string(Rule::name) << " at (" << x0 << ", " << y0 << ")");
      for (auto const& m : modes) {
        INFO("mode " << std::string(m.mode));
        for (auto [a, b] :
             {std::pair{m.v, r.v}, {m.gx, r.gx}, {m.gy, r.gy}, {m.hxx, r.hxx}, {m.hxy, r.hxy}, {m.hyy, r.hyy}})
          if (!std::isnan(a)) CHECK(close(a, b, 1e-11, 1e-12));
      }
      auto val = [&](double x, double y) { return static_cast<double>(f(x, y)); };
      auto gx = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 1.0), adx::dual<double>(y, 0.0));
        return r1.tangent();
      };
      auto gy = [&](double x, double y) {
        adx::dual<double> r1 = f(adx::dual<double>(x, 0.0), adx::dual<double>(y, 1.0));
        return r1.tangent();
      };
      CHECK(close(r.gx, fd([&](double x) { return val(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.gy, fd([&](double y) { return val(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hxx, fd([&](double x) { return gx(x, y0); }, x0), 1e-6, 1e-7));
      CHECK(close(r.hxy, fd([&](double y) { return gx(x0, y); }, y0), 1e-6, 1e-7));
      CHECK(close(r.hyy, fd([&](double y) { return gy(x0, y); }, y0), 1e-6, 1e-7));
      ++checked;
    }
  });
  CHECK(checked >= 40);
}
