// nn/loss.hpp against PyTorch 1.13 (test/reference/losses.json, gen_losses.py): every loss and
// reduction, with class weights, ignored labels, label smoothing, probabilities as targets,
// pos_weight and log targets: the value, the gradient in the input (reverse), J v (forward) and
// H v (forward over reverse, and reverse over reverse); then the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"
#include "support/tensors.hpp"

using namespace adx;
using adx_test::close;
using adx_test::primals;
using adx_test::tensor_of;

namespace {

nlohmann::json const& cases() {
  static nlohmann::json const j = adx_test::read_reference("losses.json");
  return j;
}

nn::class_loss_options class_options(nlohmann::json const& o) {
  nn::class_loss_options r;
  if (o.contains("weight")) r.weight = tensor_of(o["weight"]);
  if (o.contains("ignore_index")) r.ignore_index = o["ignore_index"].get<long>();
  if (o.contains("label_smoothing")) r.label_smoothing = o["label_smoothing"].get<double>();
  return r;
}

/// The case's loss of x with reduction R.
template <nn::reduction R, class X>
auto loss_of(nlohmann::json const& c, X const& x) {
  std::string const loss = c["loss"];
  auto const& o = c["options"];
  auto target = [&] { return tensor_of(c["target"]); };
  auto labels = [&] { return c["labels"].get<std::vector<long>>(); };
  if constexpr (R == nn::reduction::batchmean) {
    REQUIRE(loss == "kl_div");
    return nn::kl_div<R>(x, target());
  } else {
    using Out = decltype(nn::mse_loss<R>(x, target()));
    if (loss == "mse_loss") return nn::mse_loss<R>(x, target());
    if (loss == "l1_loss") return Out(nn::l1_loss<R>(x, target()));
    if (loss == "huber_loss") return Out(nn::huber_loss<R>(x, target(), o["delta"].get<double>()));
    if (loss == "smooth_l1_loss") return Out(nn::smooth_l1_loss<R>(x, target(), o["beta"].get<double>()));
    if (loss == "cross_entropy" && c.contains("labels"))
      return Out(nn::cross_entropy<R>(x, labels(), class_options(o)));
    if (loss == "cross_entropy") return Out(nn::cross_entropy<R>(x, target(), class_options(o)));
    if (loss == "nll_loss") return Out(nn::nll_loss<R>(x, labels(), class_options(o)));
    if (loss == "binary_cross_entropy")
      return Out(
          nn::binary_cross_entropy<R>(x, target(), o.contains("weight") ? tensor_of(o["weight"]) : tensor<double>{}));
    if (loss == "binary_cross_entropy_with_logits") {
      nn::bce_logits_options b;
      if (o.contains("weight")) b.weight = tensor_of(o["weight"]);
      if (o.contains("pos_weight")) b.pos_weight = tensor_of(o["pos_weight"]);
      return Out(nn::binary_cross_entropy_with_logits<R>(x, target(), b));
    }
    REQUIRE(loss == "kl_div");
    return Out(nn::kl_div<R>(x, target(), o.contains("log_target") && o["log_target"].get<bool>()));
  }
}

/// Checks case c with reduction R: value, gradient, J v and H v.
template <nn::reduction R>
void check_case(nlohmann::json const& c) {
  tensor<double> const x = tensor_of(c["x"]), v = tensor_of(c["v"]);
  tensor<double> const want = tensor_of(c["value"]);
  // the value (a number, or the pointwise losses)
  if constexpr (R == nn::reduction::none) {
    tensor<double> const got = loss_of<R>(c, x);
    REQUIRE(got.shape() == want.shape());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(close(got.data()[i], want.data()[i], 1e-14, 1e-15));
  } else {
    CHECK(close(loss_of<R>(c, x), want.data()[0], 1e-14, 1e-15));
  }
  // L: the loss, or sum(w * loss) for the pointwise ones
  auto const f = [&](auto const& t) {
    if constexpr (R == nn::reduction::none)
      return sum(tensor_of(c["w"]) * loss_of<R>(c, t));
    else
      return loss_of<R>(c, t);
  };
  tensor<double> const g = primals(grad(f)(x)), gw = tensor_of(c["grad"]);
  REQUIRE(g.shape() == gw.shape());
  double gv = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    CHECK(close(g.data()[i], gw.data()[i], 1e-13, 1e-14));
    gv += gw.data()[i] * v.data()[i];
  }
  CHECK(close(primal(functional::jvp(f, x, v).second), gv, 1e-13, 1e-13));
  // torch's second derivative of binary_cross_entropy adds 1e-12 to p and 1 - p (its double
  // backward), 1e-11 relative here; adx's is the exact one, checked against the closed form below
  double const htol = c["loss"] == "binary_cross_entropy" ? 1e-9 : 1e-12;
  tensor<double> const hv = primals(functional::hvp(f, x, v).second), hw = tensor_of(c["hvp"]);
  for (std::size_t i = 0; i < hv.size(); ++i) CHECK(close(hv.data()[i], hw.data()[i], htol, 1e-13));
  auto const gv_of = [&](auto const& t) { return sum(grad(f)(t) * v); };  // reverse over reverse
  tensor<double> const hr = primals(grad(gv_of)(x));
  for (std::size_t i = 0; i < hr.size(); ++i) CHECK(close(hr.data()[i], hw.data()[i], htol, 1e-13));
  if (c["loss"] == "binary_cross_entropy") {  // H is diagonal: w (t / p^2 + (1 - t) / (1 - p)^2) / count
    tensor<double> const t = tensor_of(c["target"]);
    auto const& o = c["options"];
    double const count = R == nn::reduction::mean ? static_cast<double>(x.size()) : 1.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      double const p = x.data()[i], ti = t.data()[i];
      double const w = o.contains("weight") ? tensor_of(o["weight"]).data()[i] : 1.0;
      double const want_h = w * (ti / (p * p) + (1 - ti) / ((1 - p) * (1 - p))) / count * v.data()[i];
      CHECK(close(hv.data()[i], want_h, 1e-13, 1e-14));
    }
  }
}

}  // namespace

TEST_CASE("losses: values, gradients, J v and H v against torch, every reduction") {
  for (auto const& item : cases()["cases"].items()) {
    std::string const name = item.key();
    auto const& c = item.value();
    CAPTURE(name);
    std::string const red = c["reduction"];
    if (red == "mean")
      check_case<nn::reduction::mean>(c);
    else if (red == "sum")
      check_case<nn::reduction::sum>(c);
    else if (red == "none")
      check_case<nn::reduction::none>(c);
    else
      check_case<nn::reduction::batchmean>(c);
  }
}

TEST_CASE("losses: float inputs, and a classifier's loss differentiated in its parameters") {
  tensor<float> const logits{{1.0f, 2.0f, 0.5f}, {0.1f, -1.0f, 3.0f}};
  double const want = primal(nn::cross_entropy(tensor<double>(logits), std::vector<int>{1, 2}));
  CHECK(nn::cross_entropy(logits, std::vector<int>{1, 2}) == doctest::Approx(want).epsilon(1e-6));
  // d/dlogits of the mean cross-entropy: (softmax - one_hot) / N
  auto const g = grad([](auto const& l) { return nn::cross_entropy(l, tensor<long>{1, 2}); })(tensor<double>(logits));
  tensor<double> const p = eval(softmax(tensor<double>(logits), 1)), y = one_hot(std::vector<long>{1, 2}, 3);
  for (std::size_t i = 0; i < 6; ++i) CHECK(close(primal(g.data()[i]), (p.data()[i] - y.data()[i]) / 2));
}

TEST_CASE("losses: errors name the loss and what is wrong") {
  tensor<double> const x{{1.0, 2.0, 0.5}, {0.1, -1.0, 3.0}};
  CHECK_THROWS_WITH_AS(nn::cross_entropy(x, std::vector<long>{1, 3}),
                       "adx: cross_entropy: index 3 is out of range for an extent of 3 (shape [2])", shape_error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(x, std::vector<long>{1}),
                       "adx: cross_entropy: the labels must be one per row of the input (shapes [2, 3] and [1])",
                       shape_error);
  CHECK_THROWS_AS(nn::cross_entropy(x, std::vector<long>{1, 0}, {.weight = tensor<double>{1.0, 2.0}}), shape_error);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(x, std::vector<long>{1, 0}, {.label_smoothing = 1.5}),
                       "adx: cross_entropy: label_smoothing must be in [0, 1], not 1.500000", value_error);
  CHECK_THROWS_AS(nn::nll_loss(x, std::vector<long>{1, 0}, {.label_smoothing = 0.1}), value_error);
  CHECK_THROWS_WITH_AS(
      nn::binary_cross_entropy(x, x),
      "adx: binary_cross_entropy: every element of the input must be in [0, 1] (element 1 is 2.000000)", value_error);
  CHECK_THROWS_AS(nn::huber_loss(x, x, 0.0), value_error);
  CHECK_THROWS_AS(nn::cross_entropy(tensor<double>{1.0, 2.0}, std::vector<long>{1}), shape_error);
  // every label ignored: the mean is 0 / 0, NaN, as torch's
  CHECK(std::isnan(primal(nn::cross_entropy(x, std::vector<long>{-100, -100}))));
}

TEST_CASE("binary_cross_entropy: finite gradients where p is exactly 0 or 1 (a saturated sigmoid)") {
  // torch: d/dx = sigmoid(x) - t = 0 at x = 20 (float sigmoid is 1) with t = 1, and at -120 with t = 0
  tape_scope<var<float>> scope;
  tensor<var<float>> x(tensor<float>{20.0f, -120.0f, 0.5f});
  var<float> const l = nn::binary_cross_entropy(sigmoid(x), tensor<float>{1.0f, 0.0f, 1.0f});
  backward(l);
  CHECK(x(0).adjoint() == 0.0f);
  CHECK(x(1).adjoint() == 0.0f);
  CHECK(x(2).adjoint() == doctest::Approx((1 / (1 + std::exp(-0.5)) - 1) / 3).epsilon(1e-6));
  // in double, p = 0 and 1 with matching targets: loss 0, and the formula's derivative, finite:
  // d/dp -log(1 - p) = 1 at p = 0, d/dp -log p = -1 at p = 1, halved by the mean (torch gives 0
  // there, from its (p - t) / max(p (1 - p), 1e-12); docs/derivative_rules.md)
  auto const g = grad([](auto const& p) {
    return nn::binary_cross_entropy(p, tensor<double>{0.0, 1.0});
  })(tensor<double>{0.0, 1.0});
  CHECK(primal(g(0)) == 0.5);
  CHECK(primal(g(1)) == -0.5);
}

TEST_CASE("losses over float tensors stay float, with float constants and weights, and agree with double") {
  tensor<float> const p{0.2f, 0.7f, 0.4f}, t{0.0f, 1.0f, 0.5f};
  tensor<double> const pd(p), td(t);
  auto const same = [](auto got, double want) {
    static_assert(std::is_same_v<decltype(got), float>, "a float loss");
    CHECK(got == doctest::Approx(want).epsilon(1e-6));
  };
  same(nn::mse_loss(p, t), nn::mse_loss(pd, td));
  same(nn::huber_loss(p, t, 0.3), nn::huber_loss(pd, td, 0.3));
  same(nn::smooth_l1_loss(p, t, 0.3), nn::smooth_l1_loss(pd, td, 0.3));
  same(nn::smooth_l1_loss(p, t, 0.0), nn::smooth_l1_loss(pd, td, 0.0));
  same(nn::binary_cross_entropy(p, t, tensor<double>{1.0, 2.0, 0.5}),
       nn::binary_cross_entropy(pd, td, tensor<double>{1.0, 2.0, 0.5}));
  same(nn::binary_cross_entropy_with_logits(p, t, {.pos_weight = tensor<double>{2.0}}),
       nn::binary_cross_entropy_with_logits(pd, td, {.pos_weight = tensor<double>{2.0}}));
  tensor<float> const logits{{1.0f, 2.0f, 0.5f}, {0.1f, -1.0f, 3.0f}};
  tensor<double> const ld(logits);
  nn::class_loss_options const o{.weight = tensor<double>{0.5, 2.0, 1.0}, .label_smoothing = 0.1};
  same(nn::cross_entropy(logits, std::vector<long>{1, 2}, o), nn::cross_entropy(ld, std::vector<long>{1, 2}, o));
  auto const each = nn::cross_entropy<nn::reduction::none>(logits, std::vector<long>{1, 2}, o);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(each)>, tensor<float>>);
  tensor<float> const probs{{0.2f, 0.3f, 0.5f}, {0.1f, 0.1f, 0.8f}};
  same(nn::cross_entropy(logits, probs, o), nn::cross_entropy(ld, tensor<double>(probs), o));
}
