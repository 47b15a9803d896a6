// nn/optim.hpp and nn/schedule.hpp: the optimisers, schedules and clipping against torch.optim's
// traces (test/reference/optimizers.json, gen_optimizers.py): torch's gradients replayed into
// adx's optimisers (the update formulas alone), then the same model trained with adx's own
// gradients; the state at the end; saving and restoring mid-run; the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <adx/adx.hpp>

#include "support/check.hpp"

using namespace adx;

namespace {

nlohmann::json const& traces() {
  static nlohmann::json const j = adx_test::read_reference("optimizers.json");
  return j;
}

tensor<double> matrix(nlohmann::json const& rows) {
  std::size_t const r = rows.size(), c = rows[0].size();
  tensor<double> t(shape{r, c});
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < c; ++j) t(i, j) = rows[i][j].get<double>();
  return t;
}

tensor<double> flat_as(nlohmann::json const& v, shape const& sh) {
  tensor<double> t(sh);
  REQUIRE(v.size() == t.size());
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = adx_test::number(v[i]);
  return t;
}

/// The largest relative difference (scaled by max(1, |want|)) between got and the numbers of want.
double max_error(tensor<double> const& got, nlohmann::json const& want) {
  REQUIRE(got.size() == want.size());
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double const w = adx_test::number(want[i]);
    e = std::max(e, std::abs(got.data()[i] - w) / std::max(1.0, std::abs(w)));
  }
  return e;
}

struct model {
  parameter<double> w{matrix(traces()["model"]["w"]), "w"};
  parameter<double> b{flat_as(traces()["model"]["b"], shape{3}), "b"};
  std::vector<parameter<double>> params() { return {w, b}; }
};

std::unique_ptr<optim::optimizer<double>> make_optimizer(nlohmann::json const& c, std::vector<parameter<double>> ps) {
  auto const& o = c["options"];
  auto num = [&](char const* k, double d) { return o.contains(k) ? o[k].get<double>() : d; };
  auto flag = [&](char const* k) { return o.contains(k) && o[k].get<bool>(); };
  std::string const kind = c["optimizer"];
  if (kind == "SGD")
    return std::make_unique<optim::sgd<double>>(ps, optim::sgd_options{.lr = num("lr", 0),
                                                                       .momentum = num("momentum", 0),
                                                                       .dampening = num("dampening", 0),
                                                                       .weight_decay = num("weight_decay", 0),
                                                                       .nesterov = flag("nesterov"),
                                                                       .maximize = flag("maximize")});
  if (kind == "Adam" || kind == "AdamW") {
    optim::adam_options a{.lr = num("lr", 1e-3),
                          .eps = num("eps", 1e-8),
                          .weight_decay = num("weight_decay", kind == "Adam" ? 0 : 1e-2),
                          .amsgrad = flag("amsgrad"),
                          .maximize = flag("maximize")};
    if (o.contains("betas")) a.beta1 = o["betas"][0], a.beta2 = o["betas"][1];
    if (kind == "Adam") return std::make_unique<optim::adam<double>>(ps, a);
    optim::adamw_options const w{a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.amsgrad, a.maximize};
    return std::make_unique<optim::adamw<double>>(ps, w);
  }
  REQUIRE(kind == "RMSprop");
  return std::make_unique<optim::rmsprop<double>>(ps, optim::rmsprop_options{.lr = num("lr", 1e-2),
                                                                             .alpha = num("alpha", 0.99),
                                                                             .eps = num("eps", 1e-8),
                                                                             .weight_decay = num("weight_decay", 0),
                                                                             .momentum = num("momentum", 0),
                                                                             .centered = flag("centered"),
                                                                             .maximize = flag("maximize")});
}

/// The case's schedule, stepped after each optimiser step (none: a no-op).
struct schedule {
  std::shared_ptr<optim::step_lr> by_steps;
  std::shared_ptr<optim::cosine_annealing_lr> cosine;
  schedule(nlohmann::json const& c, optim::optimizer_base& opt) {
    if (!c.contains("scheduler")) return;
    auto const& s = c["scheduler"];
    if (s["kind"] == "StepLR") {
      by_steps = std::make_shared<optim::step_lr>(opt, s["step_size"].get<long>(), s["gamma"].get<double>());
    } else {
      REQUIRE(s["kind"] == "CosineAnnealingLR");
      cosine = std::make_shared<optim::cosine_annealing_lr>(opt, s["T_max"].get<long>(), s["eta_min"].get<double>());
    }
  }
  void step() const {
    if (by_steps) by_steps->step();
    if (cosine) cosine->step();
  }
  optim::schedule_state state() const {
    return by_steps ? by_steps->state() : cosine ? cosine->state() : optim::schedule_state{};
  }
  void load_state(optim::schedule_state const& s) const {
    if (by_steps) by_steps->load_state(s);
    if (cosine) cosine->load_state(s);
  }
};

/// torch's loss of the model, on adx's tensors.
template <class W, class B>
auto loss_of(W const& w, B const& b) {
  tensor<double> const x = matrix(traces()["model"]["x"]), y = matrix(traces()["model"]["y"]);
  auto const d = eval(matmul(x, w.transpose()) + b - y);
  return mean(d * d) + 0.05 * sum(w * w * w * w);
}

/// Steps 0 .. last - 1 of case c on m with optimiser opt. With own_gradients the gradients are
/// adx's (autograd::backward of the loss), else torch's from the trace. Checks every step against
/// the trace within tol.
void run_steps(nlohmann::json const& c, model& m, optim::optimizer<double>& opt, schedule const& sched,
               std::size_t first, std::size_t last, bool own_gradients, double tol) {
  auto const& steps = c["steps"];
  for (std::size_t k = first; k < last; ++k) {
    auto const& st = steps[k];
    CAPTURE(k);
    opt.zero_grad();
    if (own_gradients) {
      var<double> const loss = loss_of(m.w, m.b);
      CHECK(adx_test::close(primal(loss), st["loss"].get<double>(), tol, tol));
      autograd::backward(loss);
      if (c.contains("no_grad_b"))
        for (auto const& n : c["no_grad_b"])
          if (n.get<std::size_t>() == k) m.b.zero_grad();
    } else {
      m.w.accumulate_grad(flat_as(st["grads"][0], m.w.shape()));
      if (!st["grads"][1].is_null()) m.b.accumulate_grad(flat_as(st["grads"][1], m.b.shape()));
    }
    CHECK(m.w.grad().has_value());
    if (c.contains("clip")) {
      double const p = c["clip"]["norm_type"] == "inf" ? INFINITY : c["clip"]["norm_type"].get<double>();
      double const total = optim::clip_grad_norm(opt.params(), c["clip"]["max_norm"].get<double>(), p);
      CHECK(adx_test::close(total, st["total_norm"].get<double>(), tol, tol));
    }
    opt.step();
    sched.step();
    if (st.contains("lr")) CHECK(adx_test::close(opt.lr(), st["lr"].get<double>(), 1e-15, 1e-18));
    double const e = std::max(max_error(m.w.value(), st["params"][0]), max_error(m.b.value(), st["params"][1]));
    CHECK(e <= tol);
  }
}

}  // namespace

TEST_CASE("optim: torch's gradients replayed give torch.optim's parameters, learning rates and state") {
  for (auto const& item : traces()["cases"].items()) {
    std::string const name = item.key();  // (a structured binding cannot be captured, clang 14)
    auto const& c = item.value();
    CAPTURE(name);
    model m;
    auto opt = make_optimizer(c, m.params());
    schedule const sched(c, *opt);
    // torch's vector kernels fuse some multiply-adds: a bit or two apart after 20 steps
    run_steps(c, m, *opt, sched, 0, c["steps"].size(), false, 1e-14);
    // the state at the end: torch's buffers by name, and Adam's and RMSprop's step count
    auto const s = opt->state();
    REQUIRE(s.params.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      auto const& want = c["state"][i];
      std::size_t buffers = 0;
      for (auto const& entry : want.items()) {
        std::string const key = entry.key();
        auto const& v = entry.value();
        CAPTURE(key);
        if (key == "step") {
          CHECK(s.params[i].step == v.get<double>());
          continue;
        }
        ++buffers;
        REQUIRE(s.params[i].buffers.count(key) == 1);
        CHECK(max_error(s.params[i].buffers.at(key), v) <= 1e-14);
      }
      CHECK(s.params[i].buffers.size() == buffers);
    }
  }
}

TEST_CASE("optim: a model trained with adx's own gradients follows torch's trace") {
  for (auto const& item : traces()["cases"].items()) {
    std::string const name = item.key();  // (a structured binding cannot be captured, clang 14)
    auto const& c = item.value();
    CAPTURE(name);
    model m;
    auto opt = make_optimizer(c, m.params());
    schedule const sched(c, *opt);
    run_steps(c, m, *opt, sched, 0, c["steps"].size(), true, 1e-11);
  }
}

TEST_CASE("optim: a state saved mid-run and loaded into a new optimiser continues the run exactly") {
  for (char const* name : {"sgd_momentum", "adam_wd_amsgrad", "adamw", "rmsprop_centered", "adam_cosine"}) {
    CAPTURE(name);
    auto const& c = traces()["cases"][name];
    // uninterrupted
    model whole;
    auto opt = make_optimizer(c, whole.params());
    run_steps(c, whole, *opt, schedule(c, *opt), 0, 20, false, 1e-13);
    // 10 steps, saved as text, a new optimiser over the same parameters, 10 more
    model parts;
    std::string text;
    optim::schedule_state at;
    {
      auto first = make_optimizer(c, parts.params());
      schedule const sched(c, *first);
      run_steps(c, parts, *first, sched, 0, 10, false, 1e-13);
      std::ostringstream os;
      first->save(os);
      text = os.str();
      at = sched.state();
    }
    auto second = make_optimizer(c, parts.params());
    std::istringstream is(text);
    second->load(is);
    schedule const sched(c, *second);  // made at the loaded rate: its state says where it started
    sched.load_state(at);
    run_steps(c, parts, *second, sched, 10, 20, false, 1e-13);
    // bit for bit the uninterrupted run
    for (std::size_t i = 0; i < whole.w.size(); ++i) CHECK(parts.w.value().data()[i] == whole.w.value().data()[i]);
    for (std::size_t i = 0; i < whole.b.size(); ++i) CHECK(parts.b.value().data()[i] == whole.b.value().data()[i]);
    CHECK(second->lr() == opt->lr());
  }
}

TEST_CASE("optim: step(grads) takes gradients from adx::grad in the parameters' order") {
  auto const& c = traces()["cases"]["adam"];
  model m;
  auto opt = make_optimizer(c, m.params());
  for (std::size_t k = 0; k < c["steps"].size(); ++k) {
    auto const g =
        grad([](auto const& w, auto const& b) { return loss_of(w, b); }, positions<0, 1>)(m.w.value(), m.b.value());
    tensor<double> const before = m.w.value();
    double const first = before.data()[0];
    opt->step({std::get<0>(g), std::get<1>(g)});
    CHECK(before.data()[0] == first);  // a value taken before the step keeps its numbers
    CHECK(m.w.value().data()[0] != first);
    CHECK(max_error(m.w.value(), c["steps"][k]["params"][0]) <= 1e-11);
    CHECK(max_error(m.b.value(), c["steps"][k]["params"][1]) <= 1e-11);
  }
}

TEST_CASE("optim: a module's trainable_params, float parameters, and clipping leave no gradient unscaled") {
  nn::dense<float> layer(2, 1, /*seed=*/3);
  optim::sgd<float> opt(layer.trainable_params(), {.lr = 0.1f, .momentum = 0.9f});
  tensor<float> const x{{1.0f, 2.0f}, {-1.0f, 0.5f}, {0.25f, -2.0f}};
  tensor<float> const y(shape{3, 1}, std::vector<float>{1.0f, -0.5f, 2.0f});
  float first = 0, last = 0;
  for (int k = 0; k < 60; ++k) {
    opt.zero_grad();
    var<float> const loss = nn::mse_loss(layer(x), y);
    (k == 0 ? first : last) = primal(loss);
    autograd::backward(loss);
    float const total = optim::clip_grad_norm(layer.trainable_params(), 1.0);
    // after clipping the norm of the gradients is min(total, 1) (to float rounding)
    float sq = 0;
    for (auto const& p : opt.params())
      for (float gv : p.grad()->flat()) sq += gv * gv;
    CHECK(std::sqrt(sq) == doctest::Approx(std::min(total, 1.0f)).epsilon(1e-5));
    opt.step();
  }
  // y = x w + b has an exact fit only approximately: the loss falls by far
  CHECK(last < 0.5f * first);
}

TEST_CASE("optim: bad arguments are errors that say what is wrong") {
  model m;
  auto const says = [](auto&& f, std::string const& text) {
    try {
      f();
      FAIL("no exception; expected: " << text);
    } catch (error const& e) {  // value_error, or shape_error for shapes
      CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
    }
  };
  says([&] { optim::sgd<double>(m.params(), {.momentum = 0.9}); }, "no learning rate");
  says([&] { optim::sgd<double>(std::vector<parameter<double>>{}, {.lr = 0.1}); }, "parameter list is empty");
  says(
      [&] {
        optim::sgd<double>(std::vector<parameter<double>>{m.w, m.b, m.w}, {.lr = 0.1});
      },
      "parameter 2 ('w') is parameter 0 again");
  says([&] { optim::sgd<double>(m.params(), {.lr = -1}); }, "invalid learning rate");
  says([&] { optim::sgd<double>(m.params(), {.lr = 0.1, .nesterov = true}); }, "Nesterov momentum needs");
  says([&] { optim::adam<double>(m.params(), {.beta2 = 1.0}); }, "invalid betas");
  says([&] { optim::rmsprop<double>(m.params(), {.alpha = -0.1}); }, "invalid alpha");
  says([&] { optim::step_lr(*std::make_unique<optim::adam<double>>(m.params()), 0); }, "step_size must be positive");

  optim::adam<double> opt(m.params());
  says([&] { opt.step({m.w.value()}); }, "1 gradients for 2 parameters");
  says([&] { opt.step({m.w.value(), m.w.value()}); }, "gradient 1 is not shaped as its parameter");

  std::ostringstream os;
  optim::sgd<double>(m.params(), {.lr = 0.1, .momentum = 0.5}).save(os);
  std::istringstream from_sgd(os.str());
  says([&] { opt.load(from_sgd); }, "the state is of optim::sgd");
  std::istringstream garbage("not a state");
  says([&] { opt.load(garbage); }, "not a state written by optim's save()");
  auto s = opt.state();
  s.params[0].buffers["exp_avg"] = tensor<double>(shape{2});
  says([&] { opt.load_state(s); }, "buffer exp_avg of parameter 0 is not shaped as it");

  m.w.accumulate_grad(tensor<double>(m.w.shape(), NAN));
  says([&] { optim::clip_grad_norm(m.params(), 1.0, 2.0, /*error_if_nonfinite=*/true); },
       "the total norm of the gradients is nan");
  CHECK(std::isnan(m.w.grad()->data()[0]));  // left unchanged
}

TEST_CASE("optim: AdamW's weight decay defaults to 0.01 with options given too, and clipping sees NaN") {
  std::vector<parameter<double>> ps{parameter<double>(tensor<double>{1.0}, "p")};
  optim::adamw<double> opt(ps, {.lr = 0.1});  // torch: AdamW(lr=0.1) decays by lr * 0.01
  opt.step({tensor<double>{0.0}});
  CHECK(ps[0].value()(0) == 1.0 * (1 - 0.1 * 0.01));
  // the largest magnitude of gradients holding a NaN is NaN, as torch's norm(inf) gives
  ps[0].accumulate_grad(tensor<double>{NAN});
  CHECK(std::isnan(optim::clip_grad_norm(ps, 1.0, INFINITY)));
  CHECK_THROWS_AS(optim::clip_grad_norm(ps, 1.0, INFINITY, true), value_error);
  // gradients held as a list (value_and_grad's) are clipped in place
  std::vector<tensor<double>> grads{tensor<double>{3.0, 0.0}, tensor<double>{4.0}};
  CHECK(optim::clip_grad_norm(grads, 1.0) == 5.0);
  CHECK(grads[0](0) == doctest::Approx(0.6).epsilon(1e-6));
  CHECK(grads[1](0) == doctest::Approx(0.8).epsilon(1e-6));
}

TEST_CASE("optim: a training loop with a tape_scope per step keeps the tape's size and gives the same numbers") {
  model scoped, plain;
  optim::adam<double> a(scoped.params(), {.lr = 0.05}), b(plain.params(), {.lr = 0.05});
  std::size_t first = 0, last = 0;
  for (int k = 0; k < 30; ++k) {
    {
      tape_scope<var<double>> step;
      a.zero_grad();
      autograd::backward(var<double>(loss_of(scoped.w, scoped.b)));
      a.step();
    }
    std::size_t const used = tape<double>::current().stats().bytes_used;
    (k == 0 ? first : last) = used;
    b.zero_grad();  // the same steps through value_and_grad, which opens its own recording
    auto const g = grad([&](auto const& w, auto const& bias) { return loss_of(w, bias); }, positions<0, 1>)(
        plain.w.value(), plain.b.value());
    b.step({std::get<0>(g), std::get<1>(g)});
  }
  CHECK(last == first);
  for (std::size_t i = 0; i < scoped.w.size(); ++i) CHECK(scoped.w.value().data()[i] == plain.w.value().data()[i]);
}
