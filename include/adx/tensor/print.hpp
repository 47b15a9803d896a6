// SPDX-License-Identifier: MIT
// adx: printing tensors as numpy prints arrays, e.g. [[1.41 1.6 6.6]\n [1.41 1.6 6.6]]:
// elements separated by one space, nested brackets, each row of a matrix on its own line
// indented by its depth. Each number is the primal value with at most 8 decimals and trailing
// zeros removed ("3." for an integral value, "nan", "inf", "-inf" as numpy writes them).
#pragma once

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>

#include "adx/core/expr.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {
namespace detail {

inline std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  double const a = std::abs(v);
  if (a != 0 && (a >= 1e16 || a < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.8e", v);  // scientific: trim the mantissa's zeros
    std::string s = buf;
    auto const e = s.find('e');
    std::string mant = s.substr(0, e), ex = s.substr(e);
    while (!mant.empty() && mant.back() == '0') mant.pop_back();
    return mant + ex;
  }
  std::snprintf(buf, sizeof buf, "%.8f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();  // keeps the '.', as numpy does ("3.")
  if (s == "-0.") return "-0.";
  return s;
}
inline std::string format_number(bool v) { return v ? "True" : "False"; }
template <class X>
std::string format_element(X const& x) {
  if constexpr (std::is_same_v<X, bool>)
    return format_number(x);
  else
    return format_number(static_cast<double>(primal_of(x)));
}

template <class S>
void print_level(std::ostream& os, tensor<S> const& t, std::size_t dim, std::size_t offset,
                 std::array<std::size_t, shape::max_rank> const& st) {
  shape const& sh = t.shape();
  os << '[';
  for (std::size_t i = 0; i < sh[dim]; ++i) {
    if (dim + 1 == sh.rank()) {
      if (i) os << ' ';
      os << format_element(t.data()[offset + i * st[dim]]);
    } else {
      if (i) {
        os << std::string(sh.rank() - dim - 1, '\n');
        os << std::string(dim + 1, ' ');
      }
      print_level(os, t, dim + 1, offset + i * st[dim], st);
    }
  }
  os << ']';
}

}  // namespace detail

template <class S>
std::ostream& operator<<(std::ostream& os, tensor<S> const& t) {
  if (t.rank() == 0) return os << detail::format_element(t.data()[0]);
  if (t.size() == 0) return os << "[]";  // as numpy prints any empty array
  detail::print_level(os, t, 0, 0, t.shape().strides());
  return os;
}

/// The text operator<< prints.
template <class S>
std::string to_string(tensor<S> const& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace adx
