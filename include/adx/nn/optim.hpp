// SPDX-License-Identifier: MIT
// adx: optimisers over a model's parameters, as torch.optim has them: SGD (momentum, Nesterov,
// weight decay), Adam, AdamW and RMSprop, with step() and zero_grad(), the learning-rate
// schedules StepLR and CosineAnnealingLR, clipping the gradients by their norm, and state that
// can be saved and restored.
//
//     nn::dense<double> layer(4, 2);
//     optim::adam<double> opt(layer.trainable_params(), {.lr = 1e-2});
//     for (...) {
//       tape_scope<var<double>> step;            // each step's recording its own (see below)
//       opt.zero_grad();
//       autograd::backward(loss(layer, x, y));   // accumulates into each parameter's grad()
//       opt.step();
//     }
//
// A step recorded on the thread's base recording instead would stay on the tape, and every
// later backward sweep would go down past it to the parameters: the steps would get slower.
//
// The update of each element is torch.optim's (PyTorch 1.13, foreach=False), written out
// operation by operation in the same order, constants cast to the parameters' type as torch
// casts its Python numbers. Where torch's vector kernels fuse a multiply-add the last bit may
// differ; test/nn/test_optim.cpp holds adx to torch's traces within 1e-13.
//
// A parameter whose grad() is empty (no backward reached it since zero_grad) is skipped, as in
// torch. zero_grad() empties the gradients (torch's zero_grad(set_to_none=True)). step(grads)
// takes the gradients as a list instead, in the parameters' order, for gradients from adx::grad
// or MindSpore-style APIs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <limits>
#include <map>
#include <numbers>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/parameter.hpp"
#include "adx/core/error.hpp"

namespace adx::optim {

/// The state an optimiser keeps for one parameter: the steps it took (Adam's and RMSprop's
/// bias corrections count them) and its buffers by torch's names ("momentum_buffer", "exp_avg",
/// "exp_avg_sq", "max_exp_avg_sq", "square_avg", "grad_avg"), each shaped as the parameter.
template <class T>
struct parameter_state {
  double step = 0;                           ///< the steps taken (torch keeps it for Adam and RMSprop)
  std::map<std::string, tensor<T>> buffers;  ///< by torch's names, each shaped as the parameter
};

/// An optimiser's whole state (torch's state_dict): what it is, its learning rate (which a
/// schedule changes) and one parameter_state per parameter, in the parameters' order. The other
/// hyperparameters are the constructor's and are not part of it.
template <class T>
struct optimizer_state {
  std::string kind;                        ///< "sgd", "adam", "adamw" or "rmsprop"
  double lr = 0;                           ///< the learning rate
  std::vector<parameter_state<T>> params;  ///< one per parameter, in order
};

/// What the schedules need of an optimiser: its learning rate.
class optimizer_base {
 public:
  virtual ~optimizer_base() = default;
  optimizer_base(optimizer_base const&) = delete;
  optimizer_base& operator=(optimizer_base const&) = delete;

  /// The learning rate the next step uses.
  double lr() const noexcept { return lr_; }
  /// Sets the learning rate (a schedule does); value_error if negative or NaN.
  void set_lr(double lr) {
    if (!(lr >= 0)) throw value_error("adx: optim: invalid learning rate " + std::to_string(lr) + " (must be >= 0)");
    lr_ = lr;
  }
  /// One update of every parameter that has a gradient.
  virtual void step() = 0;
  /// Empties every parameter's gradient.
  virtual void zero_grad() = 0;

 protected:
  optimizer_base() = default;
  double lr_ = 0;  ///< the learning rate
};

/// The parameters, their states and the steps every optimiser shares; each optimiser adds its
/// update of one parameter (update) and its name (kind).
template <class T>
class optimizer : public optimizer_base {
  static_assert(std::is_floating_point_v<T>, "adx: optim: the parameters' element type must be float or double");

 public:
  /// The parameters stepped, in order (aliases of the ones given: the same leaves).
  std::vector<parameter<T>> const& params() const noexcept { return params_; }

  void zero_grad() override {
    for (auto& p : params_) p.zero_grad();
  }

  void step() override {
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (auto const& g = params_[i].grad()) apply(i, *g);
  }

  /// One update with the gradients given, one per parameter in order and shaped like it
  /// (value_error otherwise); the parameters' grad() is not read.
  void step(std::vector<tensor<T>> const& grads) {
    if (grads.size() != params_.size())
      throw value_error("adx: optim::" + std::string(kind()) + "::step: " + std::to_string(grads.size()) +
                        " gradients for " + std::to_string(params_.size()) + " parameters");
    for (std::size_t i = 0; i < params_.size(); ++i)
      if (grads[i].shape() != params_[i].shape())
        detail::throw_shape_error("optim::step", "gradient " + std::to_string(i) + " is not shaped as its parameter",
                                  params_[i].shape(), grads[i].shape());
    for (std::size_t i = 0; i < params_.size(); ++i) apply(i, grads[i]);
  }

  /// A copy of the state (torch's state_dict()).
  optimizer_state<T> state() const { return {kind(), lr_, states_}; }

  /// Restores a state taken from an optimiser of the same kind over parameters of the same
  /// shapes; value_error naming the difference otherwise.
  void load_state(optimizer_state<T> const& s) {
    std::string const where = "adx: optim::" + std::string(kind()) + "::load_state: ";
    if (s.kind != kind()) throw value_error(where + "the state is of optim::" + s.kind);
    if (s.params.size() != params_.size())
      throw value_error(where + "the state has " + std::to_string(s.params.size()) + " parameters, the optimiser " +
                        std::to_string(params_.size()));
    for (std::size_t i = 0; i < params_.size(); ++i)
      for (auto const& [name, b] : s.params[i].buffers)
        if (b.shape() != params_[i].shape())
          detail::throw_shape_error("optim::load_state",
                                    "buffer " + name + " of parameter " + std::to_string(i) + " is not shaped as it",
                                    params_[i].shape(), b.shape());
    set_lr(s.lr);
    states_ = s.params;
  }

  /// Writes the state as text (hexadecimal floating point, so that it reads back exactly).
  void save(std::ostream& os) const {
    os << "adx-optim " << kind() << ' ' << params_.size() << '\n' << "lr " << hex(lr_) << '\n';
    for (auto const& s : states_) {
      os << "param " << hex(s.step) << ' ' << s.buffers.size() << '\n';
      for (auto const& [name, b] : s.buffers) {
        os << name << ' ' << b.size();
        for (T v : b.flat()) os << ' ' << hex(static_cast<double>(v));
        os << '\n';
      }
    }
  }

  /// Reads a state written by save() and restores it (load_state's checks); value_error if the
  /// text is not such a state.
  void load(std::istream& is) {
    std::string const where = "adx: optim::" + std::string(kind()) + "::load: ";
    auto bad = [&](std::string const& what) { return value_error(where + what); };
    std::string tag, word;
    optimizer_state<T> s;
    std::size_t n = 0;
    if (!(is >> tag >> s.kind >> n) || tag != "adx-optim") throw bad("not a state written by optim's save()");
    if (!(is >> word) || word != "lr") throw bad("no learning rate");
    s.lr = read_number(is, bad);
    if (s.kind == kind() && n != params_.size())
      throw bad("the state has " + std::to_string(n) + " parameters, the optimiser " + std::to_string(params_.size()));
    for (std::size_t i = 0; i < n; ++i) {
      parameter_state<T> p;
      std::size_t k = 0;
      if (!(is >> word) || word != "param") throw bad("parameter " + std::to_string(i) + " is missing");
      p.step = read_number(is, bad);
      if (!(is >> k)) throw bad("parameter " + std::to_string(i) + ": no buffer count");
      for (std::size_t j = 0; j < k; ++j) {
        std::string name;
        std::size_t size = 0;
        if (!(is >> name >> size)) throw bad("parameter " + std::to_string(i) + ": a buffer is missing");
        if (i < params_.size() && size != params_[i].size())
          throw bad("buffer " + name + " of parameter " + std::to_string(i) + " has " + std::to_string(size) +
                    " elements, the parameter " + std::to_string(params_[i].size()));
        tensor<T> b(i < params_.size() ? params_[i].shape() : shape{size});
        for (T& v : std::span<T>(b.data(), size)) v = static_cast<T>(read_number(is, bad));
        p.buffers.emplace(std::move(name), std::move(b));
      }
      s.params.push_back(std::move(p));
    }
    load_state(s);
  }

 protected:
  /// Checks the list (value_error if empty or if a parameter appears twice) and the learning rate.
  optimizer(std::vector<parameter<T>> params, double lr, char const* kind) : params_(std::move(params)) {
    std::string const where = "adx: optim::" + std::string(kind) + ": ";
    if (params_.empty()) throw value_error(where + "the parameter list is empty");
    for (std::size_t i = 0; i < params_.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (params_[i].same_leaf(params_[j]))
          throw value_error(where + "parameter " + std::to_string(i) + " ('" + params_[i].name() + "') is parameter " +
                            std::to_string(j) + " again");
    if (std::isnan(lr)) throw value_error(where + "no learning rate: give .lr");
    set_lr(lr);
    states_.resize(params_.size());
  }

  /// The new values of parameter i (p its values, g its gradient, s its state); the step count
  /// is already advanced.
  virtual void update(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s) = 0;
  /// The optimiser's name in messages and saved states ("adam").
  virtual char const* kind() const noexcept = 0;

  /// State buffer `name` of a parameter of shape sh, zeros the first time (`fresh` tells whether
  /// it was just made).
  static T* buffer(parameter_state<T>& s, adx::shape const& sh, char const* name, bool* fresh = nullptr) {
    auto [it, made] = s.buffers.try_emplace(name);
    if (made) it->second = tensor<T>(sh, T(0));
    if (fresh) *fresh = made;
    return it->second.data();
  }

  /// Checks that an option is >= 0.
  void check_non_negative(double v, char const* name) const {
    if (!(v >= 0))
      throw value_error("adx: optim::" + std::string(kind()) + ": invalid " + name + " " + std::to_string(v) +
                        " (must be >= 0)");
  }

 private:
  void apply(std::size_t i, tensor<T> const& g) {
    parameter<T>& p = params_[i];
    states_[i].step += 1;
    T const* gv = std::as_const(g).data();
    p.update_values([&](T* v) { update(v, gv, p.shape(), states_[i]); });
  }
  static std::string hex(double v) {
    std::ostringstream os;
    os << std::hexfloat << v;
    return os.str();
  }
  template <class Bad>
  static double read_number(std::istream& is, Bad const& bad) {
    std::string w;
    if (!(is >> w)) throw bad("a number is missing");
    char* end = nullptr;
    double const v = std::strtod(w.c_str(), &end);
    if (end != w.c_str() + w.size()) throw bad("'" + w + "' is not a number");
    return v;
  }

  std::vector<parameter<T>> params_;
  std::vector<parameter_state<T>> states_;
};

/// A list of parameters given as references (a module's trainable_params()) as aliases.
template <class T>
std::vector<parameter<T>> aliases(parameter_list<T> const& ps) {
  return {ps.begin(), ps.end()};
}

// ---- the optimisers --------------------------------------------------------------------------

/// torch.optim.SGD's options; .lr has no default and must be given.
struct sgd_options {
  double lr = std::numeric_limits<double>::quiet_NaN();  ///< the learning rate (required)
  double momentum = 0;                                   ///< momentum factor (0: none)
  double dampening = 0;                                  ///< dampening of the momentum
  double weight_decay = 0;                               ///< L2 penalty added to the gradient
  bool nesterov = false;                                 ///< Nesterov momentum
  bool maximize = false;                                 ///< ascend instead of descend
};

/// Stochastic gradient descent with momentum (its buffer starts as the first step's gradient),
/// dampening, Nesterov momentum and weight decay, as torch.optim.SGD.
template <class T>
class sgd : public optimizer<T> {
 public:
  /// SGD over a module's trainable_params().
  sgd(parameter_list<T> const& ps, sgd_options o) : sgd(aliases(ps), o) {}
  /// SGD over the parameters ps; value_error for torch's invalid options.
  sgd(std::vector<parameter<T>> ps, sgd_options o) : optimizer<T>(std::move(ps), o.lr, "sgd"), o_(o) {
    this->check_non_negative(o.momentum, "momentum");
    this->check_non_negative(o.weight_decay, "weight_decay");
    if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
      throw value_error("adx: optim::sgd: Nesterov momentum needs a momentum > 0 and dampening 0");
  }

 private:
  char const* kind() const noexcept override { return "sgd"; }
  void update(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s) override {
    std::size_t const n = sh.size();
    T const wd = static_cast<T>(o_.weight_decay), mom = static_cast<T>(o_.momentum);
    T const keep = static_cast<T>(1 - o_.dampening), minus_lr = static_cast<T>(-this->lr());
    bool first = false;
    T* buf = o_.momentum != 0 ? this->buffer(s, sh, "momentum_buffer", &first) : nullptr;
    for (std::size_t k = 0; k < n; ++k) {
      T d = o_.maximize ? -g[k] : g[k];
      if (o_.weight_decay != 0) d = d + wd * p[k];
      if (buf) {
        buf[k] = first ? d : buf[k] * mom + keep * d;
        d = o_.nesterov ? d + mom * buf[k] : buf[k];
      }
      p[k] = p[k] + minus_lr * d;
    }
  }
  sgd_options o_;
};

/// torch.optim.Adam's options (and AdamW's, whose weight_decay default is 0.01).
struct adam_options {
  double lr = 1e-3;         ///< the learning rate
  double beta1 = 0.9;       ///< decay of the first moment's running average
  double beta2 = 0.999;     ///< decay of the second moment's running average
  double eps = 1e-8;        ///< added to the denominator
  double weight_decay = 0;  ///< Adam: L2 penalty added to the gradient; AdamW: decoupled decay
  bool amsgrad = false;     ///< AMSGrad: the running maximum of the second moment
  bool maximize = false;    ///< ascend instead of descend
};

/// Adam, as torch.optim.Adam: weight decay added to the gradient, bias-corrected moments,
/// AMSGrad's running maximum of the second moment if amsgrad.
template <class T>
class adam : public optimizer<T> {
 public:
  /// Adam over a module's trainable_params().
  adam(parameter_list<T> const& ps, adam_options o = {}) : adam(aliases(ps), o) {}
  /// Adam over the parameters ps; value_error for torch's invalid options.
  adam(std::vector<parameter<T>> ps, adam_options o = {}) : adam(std::move(ps), o, "adam") {}

 protected:
  /// Adam or a variant of it named kind.
  adam(std::vector<parameter<T>> ps, adam_options o, char const* kind)
      : optimizer<T>(std::move(ps), o.lr, kind), o_(o) {
    this->check_non_negative(o.eps, "eps");
    this->check_non_negative(o.weight_decay, "weight_decay");
    if (!(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1))
      throw value_error(std::string("adx: optim::") + kind + ": invalid betas (" + std::to_string(o.beta1) + ", " +
                        std::to_string(o.beta2) + "): each must be in [0, 1)");
  }
  /// Adam's and AdamW's step, which differ only in how weight decay enters (decoupled: AdamW's).
  void step_adam(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s, bool decoupled) {
    adam_options const& o = o_;
    T* m = this->buffer(s, sh, "exp_avg");
    T* v = this->buffer(s, sh, "exp_avg_sq");
    T* vmax = o.amsgrad ? this->buffer(s, sh, "max_exp_avg_sq") : nullptr;
    T const wd = static_cast<T>(o.weight_decay), b1 = static_cast<T>(o.beta1), b2 = static_cast<T>(o.beta2);
    T const one_b1 = static_cast<T>(1 - o.beta1), one_b2 = static_cast<T>(1 - o.beta2);
    T const shrink = static_cast<T>(1 - this->lr() * o.weight_decay), eps = static_cast<T>(o.eps);
    // torch computes the bias corrections as Python floats (double), whatever the parameters' type
    double const c1 = 1 - std::pow(o.beta1, s.step), c2 = 1 - std::pow(o.beta2, s.step);
    T const minus_step = static_cast<T>(-(this->lr() / c1)), c2_sqrt = static_cast<T>(std::sqrt(c2));
    for (std::size_t k = 0, n = sh.size(); k < n; ++k) {
      T gk = o.maximize ? -g[k] : g[k];
      if (decoupled)
        p[k] = p[k] * shrink;
      else if (o.weight_decay != 0)
        gk = gk + wd * p[k];
      m[k] = m[k] * b1 + one_b1 * gk;
      v[k] = v[k] * b2 + one_b2 * gk * gk;
      T second = v[k];
      if (vmax) second = vmax[k] = std::max(vmax[k], v[k]);
      T const denom = std::sqrt(second) / c2_sqrt + eps;
      p[k] = p[k] + minus_step * m[k] / denom;
    }
  }

 private:
  char const* kind() const noexcept override { return "adam"; }
  void update(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s) override { step_adam(p, g, sh, s, false); }

 protected:
  adam_options o_;  ///< the options
};

/// torch.optim.AdamW's options: Adam's, with weight_decay 0.01 by default.
struct adamw_options {
  double lr = 1e-3;            ///< the learning rate
  double beta1 = 0.9;          ///< decay of the first moment's running average
  double beta2 = 0.999;        ///< decay of the second moment's running average
  double eps = 1e-8;           ///< added to the denominator
  double weight_decay = 1e-2;  ///< the decoupled decay: p *= 1 - lr * weight_decay
  bool amsgrad = false;        ///< AMSGrad: the running maximum of the second moment
  bool maximize = false;       ///< ascend instead of descend
  /// As Adam's options (the step reads these).
  constexpr operator adam_options() const { return {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize}; }
};

/// AdamW, as torch.optim.AdamW: Adam with the weight decay applied to the parameters
/// (p *= 1 - lr * weight_decay) rather than added to the gradient. weight_decay defaults to 0.01.
template <class T>
class adamw : public adam<T> {
 public:
  /// AdamW over a module's trainable_params().
  adamw(parameter_list<T> const& ps, adamw_options o = {}) : adamw(aliases(ps), o) {}
  /// AdamW over the parameters ps; value_error for torch's invalid options.
  adamw(std::vector<parameter<T>> ps, adamw_options o = {}) : adam<T>(std::move(ps), o, "adamw") {}

 private:
  char const* kind() const noexcept override { return "adamw"; }
  void update(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s) override {
    this->step_adam(p, g, sh, s, true);
  }
};

/// torch.optim.RMSprop's options.
struct rmsprop_options {
  double lr = 1e-2;         ///< the learning rate
  double alpha = 0.99;      ///< decay of the squared gradient's running average
  double eps = 1e-8;        ///< added to the denominator
  double weight_decay = 0;  ///< L2 penalty added to the gradient
  double momentum = 0;      ///< momentum factor (0: none)
  bool centered = false;    ///< divide by the running variance instead of the second moment
  bool maximize = false;    ///< ascend instead of descend
};

/// RMSprop, as torch.optim.RMSprop: a running mean of the squared gradient (centred by the
/// running mean of the gradient if centered), with momentum and weight decay.
template <class T>
class rmsprop : public optimizer<T> {
 public:
  /// RMSprop over a module's trainable_params().
  rmsprop(parameter_list<T> const& ps, rmsprop_options o = {}) : rmsprop(aliases(ps), o) {}
  /// RMSprop over the parameters ps; value_error for torch's invalid options.
  rmsprop(std::vector<parameter<T>> ps, rmsprop_options o = {}) : optimizer<T>(std::move(ps), o.lr, "rmsprop"), o_(o) {
    this->check_non_negative(o.alpha, "alpha");
    this->check_non_negative(o.eps, "eps");
    this->check_non_negative(o.weight_decay, "weight_decay");
    this->check_non_negative(o.momentum, "momentum");
  }

 private:
  char const* kind() const noexcept override { return "rmsprop"; }
  void update(T* p, T const* g, adx::shape const& sh, parameter_state<T>& s) override {
    std::size_t const n = sh.size();
    T const wd = static_cast<T>(o_.weight_decay), a = static_cast<T>(o_.alpha), one_a = static_cast<T>(1 - o_.alpha);
    T const eps = static_cast<T>(o_.eps), mom = static_cast<T>(o_.momentum), minus_lr = static_cast<T>(-this->lr());
    T* sq = this->buffer(s, sh, "square_avg");
    T* ga = o_.centered ? this->buffer(s, sh, "grad_avg") : nullptr;
    T* buf = o_.momentum > 0 ? this->buffer(s, sh, "momentum_buffer") : nullptr;
    for (std::size_t k = 0; k < n; ++k) {
      T gk = o_.maximize ? -g[k] : g[k];
      if (o_.weight_decay != 0) gk = gk + wd * p[k];
      sq[k] = sq[k] * a + one_a * gk * gk;
      T avg;
      if (ga) {
        ga[k] = ga[k] * a + one_a * gk;
        avg = std::sqrt(sq[k] + T(-1) * ga[k] * ga[k]);
      } else {
        avg = std::sqrt(sq[k]);
      }
      avg = avg + eps;
      if (buf) {
        buf[k] = buf[k] * mom + gk / avg;
        p[k] = p[k] + minus_lr * buf[k];
      } else {
        p[k] = p[k] + minus_lr * gk / avg;
      }
    }
  }
  rmsprop_options o_;
};

// ---- clipping --------------------------------------------------------------------------------

/// Scales the gradients `grads` in place so that their total norm is at most max_norm, as
/// torch.nn.utils.clip_grad_norm_: the total is the norm_type-norm of the gradients' norms (the
/// largest magnitude for norm_type infinity, NaN if one is NaN), every gradient is multiplied by
/// min(1, max_norm / (total + 1e-6)), and the total (before clipping) is returned. If
/// error_if_nonfinite and the total is NaN or infinite, value_error and nothing is changed. The
/// list is what value_and_grad returns, for step(grads).
template <class T>
T clip_grad_norm(std::vector<tensor<T>>& grads, double max_norm, double norm_type = 2,
                 bool error_if_nonfinite = false) {
  if (!(norm_type > 0)) throw value_error("adx: optim::clip_grad_norm: norm_type must be > 0");
  bool const inf = std::isinf(norm_type);
  T const p = static_cast<T>(norm_type);
  auto norm_of = [&](T const* x, std::size_t n) {  // torch.norm(x, norm_type), or the largest |x| (NaN wins)
    T r = 0;
    for (std::size_t k = 0; k < n; ++k)
      r = inf              ? (std::abs(x[k]) > r || std::isnan(x[k]) ? std::abs(x[k]) : r)
          : norm_type == 2 ? r + x[k] * x[k]
                           : r + std::pow(std::abs(x[k]), p);
    return inf ? r : norm_type == 2 ? std::sqrt(r) : std::pow(r, 1 / p);
  };
  if (grads.empty()) return T(0);
  std::vector<T> norms;
  for (auto const& g : grads) norms.push_back(norm_of(g.data(), g.size()));
  T const total = norm_of(norms.data(), norms.size());  // of one norm too, as torch
  if (error_if_nonfinite && !std::isfinite(total))
    throw value_error("adx: optim::clip_grad_norm: the total norm of the gradients is " + std::to_string(total) +
                      ", so they cannot be clipped (error_if_nonfinite)");
  T const coef = std::min(static_cast<T>(max_norm) / (total + static_cast<T>(1e-6)), T(1));
  for (auto& g : grads)
    for (T& x : std::span<T>(g.data(), g.size())) x = x * coef;
  return total;
}

/// clip_grad_norm over the gradients of `params` (those that have one), written back to them.
template <class T>
T clip_grad_norm(std::vector<parameter<T>> const& params, double max_norm, double norm_type = 2,
                 bool error_if_nonfinite = false) {
  std::vector<parameter<T>> with;
  std::vector<tensor<T>> grads;
  for (auto const& q : params)
    if (auto const& g = q.grad()) with.push_back(q), grads.push_back(*g);
  T const total = clip_grad_norm(grads, max_norm, norm_type, error_if_nonfinite);
  for (std::size_t i = 0; i < with.size(); ++i) {
    with[i].zero_grad();
    with[i].accumulate_grad(grads[i]);
  }
  return total;
}

/// clip_grad_norm over a module's trainable_params().
template <class T>
T clip_grad_norm(parameter_list<T> const& params, double max_norm, double norm_type = 2,
                 bool error_if_nonfinite = false) {
  return clip_grad_norm(aliases(params), max_norm, norm_type, error_if_nonfinite);
}

}  // namespace adx::optim
