// Test support: comparison with IEEE classes (NaN equals NaN, infinities by sign) and the
// reference vectors of test/reference/.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace adx_test {

/// Distance in units in the last place between two doubles of the same sign (huge otherwise).
inline std::uint64_t ulps(double a, double b) {
  if (a == b) return 0;
  if (std::signbit(a) != std::signbit(b)) return ~std::uint64_t{0};
  auto const ia = std::bit_cast<std::uint64_t>(std::abs(a)), ib = std::bit_cast<std::uint64_t>(std::abs(b));
  return ia > ib ? ia - ib : ib - ia;
}

/// a and b agree: same class when either is not finite, else |a-b| <= atol + rtol |b|.
inline bool close(double a, double b, double rtol = 1e-12, double atol = 1e-12) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= atol + rtol * std::abs(b);
}

/// Calls f(i, e) for each element e of a tuple (of lambdas, say), i counting from 1.
template <class Tuple, class F>
void for_each_numbered(Tuple const& t, F&& f) {
  std::apply(
      [&](auto const&... e) {
        int i = 0;
        (f(++i, e), ...);
      },
      t);
}

#define ADX_CHECK_CLOSE(a, b, rtol, atol)                     \
  do {                                                        \
    double const adx_a_ = (a), adx_b_ = (b);                  \
    INFO(#a " = " << adx_a_ << ", " #b " = " << adx_b_);      \
    CHECK(::adx_test::close(adx_a_, adx_b_, (rtol), (atol))); \
  } while (0)

/// test/reference/<file>, parsed (each caller keeps its own in a static).
inline nlohmann::json read_reference(std::string const& file) {
  std::string const path = std::string(ADX_REFERENCE_DIR "/") + file;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return nlohmann::json::parse(in);
}
inline nlohmann::json const& reference() {
  static nlohmann::json const j = read_reference("reference_public.json");
  return j;
}
inline nlohmann::json const& seeds() {
  static nlohmann::json const j = read_reference("seed_examples.json");
  return j;
}
inline nlohmann::json const& reference_case(std::string const& name) {
  for (auto const& c : reference()["cases"])
    if (c["name"] == name) return c;
  FAIL("no reference case " << name);
  static nlohmann::json const none;
  return none;
}

/// A JSON number or one of the strings "nan", "inf", "-inf".
inline double number(nlohmann::json const& v) {
  if (v.is_string()) {
    auto const s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    FAIL("not a number: " << s);
  }
  return v.get<double>();
}
/// The flat data of a reference tensor {"shape": [...], "data": [...]}.
inline std::vector<double> data(nlohmann::json const& t) {
  std::vector<double> out;
  for (auto const& v : t["data"]) out.push_back(number(v));
  return out;
}

}  // namespace adx_test
