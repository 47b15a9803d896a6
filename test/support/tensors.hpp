// Test support: reference tensors ({"shape": [...], "data": [...]}) read into adx tensors and
// compared with them.
#pragma once

#include <adx/tensor/tensor.hpp>
#include <string>
#include <vector>

#include "support/check.hpp"

namespace adx_test {

/// The reference tensor as an adx::tensor<double>.
inline adx::tensor<double> tensor_of(nlohmann::json const& t) {
  auto const dims = t["shape"].get<std::vector<std::size_t>>();
  return adx::tensor<double>(adx::shape::from(dims.begin(), dims.end()), data(t));
}

/// t has the reference tensor's shape and every element close to it.
inline void check_tensor(adx::tensor<double> const& t, nlohmann::json const& want, double rtol = 1e-12,
                         double atol = 1e-12) {
  auto const dims = want["shape"].get<std::vector<std::size_t>>();
  REQUIRE(t.shape() == adx::shape::from(dims.begin(), dims.end()));
  auto const w = data(want);
  for (std::size_t i = 0; i < w.size(); ++i) CHECK(close(t[i], w[i], rtol, atol));
}

/// The numbers of a tensor of any element type: each element's value at the bottom level.
template <class S>
adx::tensor<double> primals(adx::tensor<S> const& t) {
  adx::tensor<double> r(t.shape());
  for (std::size_t i = 0; i < t.size(); ++i) r.data()[i] = static_cast<double>(adx::primal(t.data()[i]));
  return r;
}

/// t has want's number of elements, each close to want's (shape not compared).
inline void check_values(adx::tensor<double> const& t, std::vector<double> const& want, double rtol = 1e-12,
                         double atol = 1e-12) {
  REQUIRE(t.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": " << t[i] << " vs " << want[i]);
    CHECK(close(t[i], want[i], rtol, atol));
  }
}

/// The message of the E (an adx error type) that f throws, or "no error"; other exceptions
/// pass through.
template <class E = adx::error, class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (E const& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace adx_test
