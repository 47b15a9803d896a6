// SPDX-License-Identifier: MIT
// adx: the API layer's one route to the tape. Every entry point that sweeps (gradients,
// autograd::grad and backward, grad_operation and grad, functional's vjp) fills a sweep_request
// and runs it; the request holds the frameworks' policies (TensorFlow's stop_gradients and
// unconnected rounding, reachability for the None-versus-zero rule, torch's release of a swept
// graph), which the tape carries out as a sweep_spec. A sweep from one output with no policy
// (functional's jacrev rows and hvp, gradient and value_and_gradient) is sweep_from, which hands
// its seed to the same tape::sweep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "adx/api/release.hpp"
#include "adx/reverse/var.hpp"

namespace adx::detail {

/// One sweep of the current tape<T> for an API: what it seeds and which policies hold.
template <class T>
struct sweep_request {
  std::vector<sweep_seed<T>> seeds;
  std::vector<index_type> stops;  ///< tf.gradients' stop_gradients: adjoints collected, not passed on
  bool stop_unconnected = false;  ///< tf.gradients: stop at floor, ceil, round, trunc (tape::unconnected)
  bool track_reached = true;      ///< note what the sweep reaches (tape::reached: None versus zero)
  bool torch_release = false;     ///< torch's retain_graph rules (settle_release) after the sweep
  bool release = false;           ///< with torch_release: release what the sweep used (retain_graph false)
  /// With torch_release: the sweep uses only the operations on a path from the seeds to one of
  /// these statements (torch runs only those for autograd.grad's inputs), not all it reached.
  std::optional<std::vector<index_type>> inputs;

  /// Adds the seed w at y (nothing for a constant).
  void seed(var<T> const& y, T const& w) {
    if (y.index() != 0) seeds.push_back({y.index(), y.epoch(), w});
  }

  /// Runs the sweep on tape<T>::current(). With no seed every adjoint reads zero afterwards
  /// (not the tape's last sweep's).
  void run() const {
    auto& tp = tape<T>::current();
    std::vector<std::uint8_t> const mask = stop_mask(tp);
    tp.sweep({.seeds = seeds, .stops = mask, .track_reached = track_reached});
    if (torch_release) settle_release(tp, inputs ? &*inputs : nullptr, release);
  }

 private:
  /// The statements where the sweep stops, as the tape's mask (empty: none).
  std::vector<std::uint8_t> stop_mask(tape<T> const& tp) const {
    std::vector<std::uint8_t> mask;
    auto const ranges = tp.unconnected_ranges();
    if (stops.empty() && (!stop_unconnected || ranges.empty())) return mask;
    mask.assign(std::size_t{tp.size()} + 1, 0);
    for (index_type i : stops)
      if (i != 0 && i <= tp.size()) mask[i] = 1;
    if (stop_unconnected)
      for (auto const& [first, last] : ranges) std::fill(mask.begin() + first, mask.begin() + last + 1, 1);
    return mask;
  }
};

/// The sweep from one output y with seed 1 and no policy (jacrev's rows, gradient, hvp): a
/// sweep_request with nothing but that seed, handed to the tape without the request's seed list
/// (no allocation per row of a Jacobian or Hessian). Read the adjoints afterwards with
/// var::adjoint or adjoints().
template <class T>
void sweep_from(var<T> const& y) {
  sweep_seed<T> const seed{y.index(), y.epoch(), constant<T>(1)};
  tape<T>::current().sweep({.seeds = {&seed, y.index() != 0 ? 1u : 0u}});
}

/// The API's sweeps of a recording the caller may also sweep (gradients, autograd::grad and
/// backward): a private sweep state for the scope, so that the adjoints of the caller's own
/// backward are as they were afterwards.
template <class T>
struct private_sweep {
  tape<T>& tp = tape<T>::current();
  private_sweep() { tp.begin_private_sweep(); }
  private_sweep(private_sweep const&) = delete;
  private_sweep& operator=(private_sweep const&) = delete;
  ~private_sweep() { tp.end_private_sweep(); }
};

/// Runs request in the grad mode create_graph, as torch's engine does: with it the sweep
/// records (the gradients of nested scalars stay differentiable) even inside an outer no_grad;
/// without it the sweep records nothing on the tapes below (its gradients are constants anyway).
template <class T>
void run_in_grad_mode(sweep_request<T> const& request, bool create_graph) {
  if (create_graph) {
    enable_grad recording_on;
    request.run();
  } else {
    no_grad recording_off;
    request.run();
  }
}

}  // namespace adx::detail
