// Anomaly detection (reverse/anomaly.hpp): in a detect_anomaly scope the first non-finite
// contribution of a backward sweep throws anomaly_error naming the statement, its operation and
// the source line that recorded it; outside one the sweep is the usual one.
#include <doctest/doctest.h>

#include <adx/adx.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>

using namespace adx;

namespace {

double const inf = std::numeric_limits<double>::infinity();

template <class F>
std::optional<anomaly_error> anomaly_of(F&& f) {
  try {
    f();
  } catch (anomaly_error const& e) {
    return e;
  }
  return std::nullopt;
}

bool ends_with(std::string const& s, std::string const& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool recorded_here(statement_origin const& o, unsigned line) {
  return o.located() && o.where.line() == line && ends_with(o.where.file_name(), "test_anomaly.cpp");
}

}  // namespace

TEST_CASE("anomaly: sqrt at 0 names the statement, its operation and its line") {
  tape_scope<var<double>> scope;
  detect_anomaly on;
  unsigned const x_line = __LINE__ + 1;
  var<double> const x = 0.0;
  unsigned const y_line = __LINE__ + 1;
  var<double> const y = sqrt(x) * 2;
  auto const e = anomaly_of([&] { backward(y); });
  REQUIRE(e.has_value());
  CHECK(e->statement() == y.index());
  CHECK(std::string(e->origin().operation) == "mul(sqrt(x), c)");
  CHECK(recorded_here(e->origin(), y_line));
  CHECK(e->input() == x.index());
  CHECK(std::string(e->input_origin().operation) == "an independent variable");
  CHECK(recorded_here(e->input_origin(), x_line));
  std::string const what = e->what();
  // x's index: 1 in a fresh process (CTest), later when parameters of earlier test cases live on
  std::string const head =
      "adx: anomaly: the backward sweep produced inf in the adjoint of statement " + std::to_string(x.index()) + ",";
  CHECK_MESSAGE(what.find(head) == 0, what);
  CHECK(what.find("mul(sqrt(x), c), recorded at ") != std::string::npos);
  std::string where = "test_anomaly.cpp:";  // appended, not operator+: g++ 12 -O3 warns falsely there
  where += std::to_string(y_line);
  CHECK(what.find(where) != std::string::npos);
  CHECK(what.find("its partial with respect to operand 1 is inf and its adjoint is 1") != std::string::npos);
}

TEST_CASE("anomaly: rounding, recorded on its own for tf.gradients, names the caller's line") {
  tape_scope<var<double>> scope;
  detect_anomaly on;
  var<double> const x = 1.5;
  var<double> const c = inf;
  unsigned const f_line = __LINE__ + 1;
  var<double> const f = floor(x * x);
  var<double> const y = f * c;
  auto e = anomaly_of([&] { backward(y); });
  REQUIRE(e.has_value());
  CHECK(e->input() == f.index());
  CHECK(recorded_here(e->input_origin(), f_line));
  tensor<var<double>> const t{1.5, 2.5};
  unsigned const ft_line = __LINE__ + 1;
  tensor<var<double>> const ft = ceil(t * t);
  var<double> const s = sum(ft * c);
  e = anomaly_of([&] { backward(s); });
  REQUIRE(e.has_value());
  CHECK(e->input() == ft[0].index());
  CHECK(recorded_here(e->input_origin(), ft_line));
}

TEST_CASE("anomaly: off by default, the same sweep gives inf without a word") {
  tape_scope<var<double>> scope;
  var<double> const x = 0.0;
  var<double> const y = sqrt(x) * 2;
  CHECK_NOTHROW(backward(y));
  CHECK(x.adjoint() == inf);
}

TEST_CASE("anomaly: assignments carry their line, compound assignments their operation only") {
  tape_scope<var<double>> scope;
  detect_anomaly on;
  var<double> const x = 0.0;
  var<double> z = 1.0;
  unsigned const line = __LINE__ + 1;
  z = log(x) + z;
  auto e = anomaly_of([&] { backward(z); });
  REQUIRE(e.has_value());
  CHECK(std::string(e->origin().operation) == "add(log(x), x)");
  CHECK(recorded_here(e->origin(), line));

  z += log(x);
  e = anomaly_of([&] { backward(z); });
  REQUIRE(e.has_value());
  CHECK(std::string(e->origin().operation) == "add(x, log(x))");
  CHECK(!e->origin().located());
  CHECK(std::string(e->what()).find("no source line: a compound assignment") != std::string::npos);
}

TEST_CASE("anomaly: a non-finite seed, and a finite sweep through an infinite value that is not used") {
  tape_scope<var<double>> scope;
  detect_anomaly on;
  var<double> const x = 2.0;
  var<double> const y = x * x;
  auto const e = anomaly_of([&] { backward(y, inf); });
  REQUIRE(e.has_value());
  CHECK(e->statement() == 0);
  CHECK(e->input() == y.index());
  CHECK(std::string(e->what()).find("the seed of the backward sweep is inf") != std::string::npos);

  var<double> const unused = log(x - 2.0);  // -inf, its partial inf: not on y's path
  (void)unused;
  var<double> const w = exp(x) * 3.0;
  CHECK_NOTHROW(backward(w));
  CHECK(x.adjoint() == doctest::Approx(3.0 * std::exp(2.0)));
}

TEST_CASE("anomaly: tensor operations (elementwise, reductions, matmul) name their line") {
  tape_scope<var<double>> scope;
  detect_anomaly on;
  unsigned const t_line = __LINE__ + 1;
  tensor<var<double>> const t(tensor<double>{0.0, 1.0, 4.0});
  unsigned const r_line = __LINE__ + 1;
  tensor<var<double>> const r = sqrt(t) * 3.0;
  var<double> const s = sum(r);
  auto e = anomaly_of([&] { backward(s); });
  REQUIRE(e.has_value());
  CHECK(std::string(e->origin().operation) == "mul(sqrt(x), c)");
  CHECK(recorded_here(e->origin(), r_line));
  CHECK(e->input() == t[0].index());
  CHECK(recorded_here(e->input_origin(), t_line));
  CHECK(std::string(e->what()).find("a tensor operation on statements") != std::string::npos);

  unsigned const s2_line = __LINE__ + 1;
  var<double> const s2 = sum(log(t));  // one node: the elementwise log fused into the sum
  e = anomaly_of([&] { backward(s2); });
  REQUIRE(e.has_value());
  CHECK(std::string(e->origin().operation) == "sum(log(x))");
  CHECK(recorded_here(e->origin(), s2_line));

  tensor<var<double>> const w(tensor<double>{{1.0, 2.0}, {3.0, inf}});
  tensor<var<double>> const x(tensor<double>{{1.0, 0.0}});
  unsigned const m_line = __LINE__ + 1;
  tensor<var<double>> const m = matmul(x, w);
  var<double> const s3 = sum(m);
  e = anomaly_of([&] { backward(s3); });
  REQUIRE(e.has_value());
  CHECK(std::string(e->origin().operation) == "matmul");
  CHECK(recorded_here(e->origin(), m_line));
  CHECK(e->input() == x(0, 1).index());  // dx = dC w^T: its second entry is 3 + inf
}

TEST_CASE("anomaly: nested reverse mode (the inner sweep's arithmetic is checked too)") {
  tape_scope<var<var<double>>> scope;
  detect_anomaly on;
  var<var<double>> const x = 0.0;
  unsigned const line = __LINE__ + 1;
  var<var<double>> const y = x * x * sqrt(x);  // its partial in x is 0 * inf = NaN at 0
  auto const e = anomaly_of([&] { backward(y); });
  REQUIRE(e.has_value());
  CHECK(recorded_here(e->origin(), line));
  CHECK(std::string(e->what()).find("produced nan") != std::string::npos);
}

TEST_CASE("anomaly: scopes nest, belong to their thread, and statements recorded outside say so") {
  CHECK(!detail::anomaly_mode());
  {
    detect_anomaly a;
    {
      detect_anomaly b;
      CHECK(detail::anomaly_mode());
    }
    CHECK(detail::anomaly_mode());
    bool other = true;
    std::thread([&] { other = detail::anomaly_mode(); }).join();
    CHECK(!other);
  }
  CHECK(!detail::anomaly_mode());

  tape_scope<var<double>> scope;
  var<double> const x = 0.0;
  var<double> const y = log(x);  // recorded outside anomaly mode
  detect_anomaly on;
  auto const e = anomaly_of([&] { backward(y); });
  REQUIRE(e.has_value());
  CHECK(!e->origin().known());
  CHECK(std::string(e->what()).find("recorded outside anomaly mode") != std::string::npos);
}

TEST_CASE("anomaly: origins do not outlive their recording (indices are reused)") {
  tape_scope<var<double>> outer;
  {
    detect_anomaly on;
    tape_scope<var<double>> inner;
    var<double> const a = 1.0;
    var<double> const b = exp(a);
    (void)b;
  }
  var<double> const x = 0.0;      // reuses the inner scope's first index
  var<double> const y = sqrt(x);  // reuses the second, recorded outside anomaly mode
  detect_anomaly on;
  auto const e = anomaly_of([&] { backward(y); });
  REQUIRE(e.has_value());
  CHECK(!e->origin().known());  // not the inner scope's exp(x)
  CHECK(!e->input_origin().known());
}
