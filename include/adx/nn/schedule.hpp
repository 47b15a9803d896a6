// SPDX-License-Identifier: MIT
// adx: learning-rate schedules, as torch.optim.lr_scheduler's StepLR and CosineAnnealingLR. A
// schedule holds the optimiser it changes; its step() is called once per epoch (or per step),
// after the optimiser's step():
//
//     optim::sgd<double> opt(params, {.lr = 0.1, .momentum = 0.9});
//     optim::step_lr schedule(opt, /*step_size=*/30, /*gamma=*/0.1);
//     for (int epoch = 0; epoch < 90; ++epoch) { train(opt); schedule.step(); }
//
// Each computes the new rate from the current one as torch's get_lr does (not from a closed
// form), so that the rates agree with torch's to the last bit.
#pragma once

#include <cmath>
#include <numbers>
#include <string>

#include "adx/core/error.hpp"
#include "adx/nn/optim.hpp"

namespace adx::optim {

/// Where a schedule is (torch's scheduler state_dict): the steps taken and the learning rate it
/// started from. Saved beside the optimiser's state, it lets a new schedule continue the run.
struct schedule_state {
  long last_epoch = 0;  ///< the steps taken
  double base_lr = 0;   ///< the learning rate the schedule started from (cosine_annealing_lr)
};

/// Multiplies the learning rate by gamma every step_size steps (torch's StepLR).
class step_lr {
 public:
  /// Multiplies opt's learning rate by gamma every step_size steps; value_error if step_size <= 0.
  step_lr(optimizer_base& opt, long step_size, double gamma = 0.1) : opt_(opt), step_size_(step_size), gamma_(gamma) {
    if (step_size <= 0) throw value_error("adx: optim::step_lr: step_size must be positive");
  }
  /// One epoch on: the learning rate times gamma when the count reaches a multiple of step_size.
  void step() {
    ++epoch_;
    if (epoch_ % step_size_ == 0) opt_.set_lr(opt_.lr() * gamma_);
  }
  /// The steps taken so far (torch's last_epoch).
  long last_epoch() const noexcept { return epoch_; }
  /// Where the schedule is, to be saved beside the optimiser's state.
  schedule_state state() const noexcept { return {epoch_, 0}; }
  /// Continues from a saved state (the optimiser's learning rate is restored with its state).
  void load_state(schedule_state const& s) noexcept { epoch_ = s.last_epoch; }

 private:
  optimizer_base& opt_;
  long step_size_;
  double gamma_;
  long epoch_ = 0;
};

/// Anneals the learning rate from its value at construction (base) to eta_min along half a
/// cosine over t_max steps, then back up over the next t_max, and so on (torch's
/// CosineAnnealingLR): lr_t = eta_min + (base - eta_min) (1 + cos(pi t / t_max)) / 2.
class cosine_annealing_lr {
 public:
  /// Anneals opt's learning rate (its value now is the base) to eta_min over t_max steps;
  /// value_error if t_max <= 0.
  cosine_annealing_lr(optimizer_base& opt, long t_max, double eta_min = 0)
      : opt_(opt), t_max_(t_max), eta_min_(eta_min), base_(opt.lr()) {
    if (t_max <= 0) throw value_error("adx: optim::cosine_annealing_lr: t_max must be positive");
  }
  /// One epoch on.
  void step() {
    ++epoch_;
    constexpr double pi = std::numbers::pi;
    double const lr = opt_.lr();
    double const t = static_cast<double>(epoch_), n = static_cast<double>(t_max_);
    long const phase = ((epoch_ - 1 - t_max_) % (2 * t_max_) + 2 * t_max_) % (2 * t_max_);  // Python's %
    if (phase == 0)  // the bottom of a period: the next rate rises from eta_min
      opt_.set_lr(lr + (base_ - eta_min_) * (1 - std::cos(pi / n)) / 2);
    else
      opt_.set_lr((1 + std::cos(pi * t / n)) / (1 + std::cos(pi * (t - 1) / n)) * (lr - eta_min_) + eta_min_);
  }
  /// The steps taken so far (torch's last_epoch).
  long last_epoch() const noexcept { return epoch_; }
  /// Where the schedule is, to be saved beside the optimiser's state.
  schedule_state state() const noexcept { return {epoch_, base_}; }
  /// Continues from a saved state (the optimiser's learning rate is restored with its state).
  void load_state(schedule_state const& s) noexcept {
    epoch_ = s.last_epoch;
    base_ = s.base_lr;
  }

 private:
  optimizer_base& opt_;
  long t_max_;
  double eta_min_, base_;
  long epoch_ = 0;
};

}  // namespace adx::optim
