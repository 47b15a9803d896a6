// SPDX-License-Identifier: MIT
// adx: named trainable tensors, what torch calls a leaf that requires grad and MindSpore a
// Parameter.
//
// A parameter<T> IS a tensor<var<T>> whose elements are independent variables, so a model uses
// it in expressions like any tensor. It adds a name (MindSpore's return_ids reports it), a
// .grad() that autograd::backward accumulates into, and assign() for an optimiser's step.
//
// Copies are aliases: a copy of a parameter is the same leaf (the same variables, name and
// gradient), as a second Python reference to one Parameter is. So a model may hold, pass and
// return its parameters by value (adx::grad keeps a copy of the model) without losing their
// gradients. assign() and refresh() therefore change the shared variables in place, and a
// plain tensor copied from a parameter follows them too. A graph recorded before assign()
// keeps the values it was recorded with, and so does a tensor taken from value() before it.
//
// Like any tensor made from numbers, a parameter is one block of variables kept as its values
// (tensor.hpp), so products use the values as their GEMM operand and gradients are read as one
// copy: a model's parameters cost what tensors made inside the gradient's recording cost.
//
// A parameter's variables live on the thread's tape<T> in the recording that was current when
// they were made. The gradient APIs make them independent variables again (refresh) when that
// recording has ended, for example when the parameter was made inside a tape_scope that is over.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adx/core/error.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

template <class T>
class parameter;

namespace detail {

/// The parameters of element type T made on one thread (backward accumulates into them). Each
/// parameter keeps the registry it joined: one destroyed on another thread, or after its thread
/// ended, leaves that list (under its lock) instead of leaving a dangling pointer in it.
template <class T>
struct parameter_registry {
  std::mutex lock;
  std::vector<parameter<T>*> live;

  /// The calling thread's registry.
  static std::shared_ptr<parameter_registry> const& mine() {
    thread_local std::shared_ptr<parameter_registry> const r = std::make_shared<parameter_registry>();
    return r;
  }
  void add(parameter<T>* p) {
    std::lock_guard<std::mutex> const hold(lock);
    live.push_back(p);
  }
  void remove(parameter<T>* p) {
    std::lock_guard<std::mutex> const hold(lock);
    live.erase(std::remove(live.begin(), live.end(), p), live.end());
  }
  /// Gives every parameter of the calling thread whose recording has ended new independent
  /// variables.
  static void refresh_all() {
    auto& r = *mine();
    std::lock_guard<std::mutex> const hold(r.lock);
    for (auto* p : r.live) p->refresh();
  }
  /// The calling thread's parameters with one entry per leaf (aliases share a leaf).
  static std::vector<parameter<T>*> leaves() {
    auto& r = *mine();
    std::lock_guard<std::mutex> const hold(r.lock);
    std::vector<parameter<T>*> out;
    for (auto* p : r.live)
      if (std::none_of(out.begin(), out.end(), [p](auto* q) { return q->same_leaf(*p); })) out.push_back(p);
    return out;
  }
};

}  // namespace detail

/// A named leaf that requires grad (torch's Parameter, MindSpore's Parameter): a tensor of
/// independent variables whose elements stay the same variables across recordings, with a
/// gradient that autograd::backward accumulates into (.grad(), a std::optional) and new values
/// through assign(). A module's parameters are listed by its trainable_params().
///
///     parameter<double> w{tensor<double>{0.5, -1.0}, "w"};
///     w.assign(w.values() - 0.1 * g);   // an SGD step
template <class T>
class parameter : public tensor<var<T>> {
  using base = tensor<var<T>>;

 public:
  /// A parameter holding `value` (its elements become independent variables), named `name`.
  explicit parameter(tensor<T> const& value, std::string name = {})
      : base(value), leaf_(std::make_shared<leaf>(leaf{std::move(name), {}})) {
    registry_->add(this);
  }
  /// A rank-0 parameter (torch.tensor(2.0, requires_grad=True)).
  explicit parameter(T const& value, std::string name = {}) : parameter(tensor<T>::scalar(value), std::move(name)) {}

  /// The same leaf under a second name in C++: same variables, name and gradient.
  parameter(parameter const& o) : base(o), leaf_(o.leaf_) { registry_->add(this); }
  /// Becomes the same leaf as o.
  parameter& operator=(parameter const& o) {
    base::operator=(o);
    leaf_ = o.leaf_;
    return *this;
  }
  ~parameter() { registry_->remove(this); }

  /// Does not compile: a leaf that requires grad cannot be changed in place by an expression
  /// (torch refuses it too); new values go through assign().
  template <class X>
  parameter& operator=(X const&) requires(!std::is_same_v<X, parameter>) {
    static_assert(sizeof(X) == 0,
                  "adx: a parameter is a leaf that requires grad and cannot be assigned an expression in place; "
                  "use p.assign(new_values) (torch: a leaf Variable that requires grad is being used in an in-place "
                  "operation)");
    return *this;
  }
  /// Does not compile (in place on a leaf): use assign().
  template <class X>
  parameter& operator+=(X const& x) {
    return *this = x;
  }
  /// Does not compile (in place on a leaf): use assign().
  template <class X>
  parameter& operator-=(X const& x) {
    return *this = x;
  }
  /// Does not compile (in place on a leaf): use assign().
  template <class X>
  parameter& operator*=(X const& x) {
    return *this = x;
  }
  /// Does not compile (in place on a leaf): use assign().
  template <class X>
  parameter& operator/=(X const& x) {
    return *this = x;
  }

  // Elements are read only: a write through a copy-on-write accessor would give this alias
  // elements of its own, no longer the leaf's (new values go through assign()).
  /// The elements (the leaf's variables), read only.
  var<T> const* data() const { return base::data(); }
  /// Element (i, j, ...), read only.
  template <class... I>
  requires(std::is_integral_v<I>&&...) var<T>
  const& operator()(I... i) const { return base::operator()(i...); }
  /// Element i of the flat row-major order, read only.
  var<T> const& operator[](std::size_t i) const { return base::operator[](i); }
  /// A slice is a copy, as for any tensor: the same variables as they are now, which a later
  /// assign() or refresh() does not change (tensor::slice would share a contiguous range of
  /// the block, which would follow them).
  tensor<var<T>> slice(long axis, long begin, long end, long step = 1) const {
    return detail::tensor_access::snapshot(base::slice(axis, begin, end, step));
  }

  /// The name given at construction ("" if none).
  std::string const& name() const noexcept { return leaf_->name; }
  /// Whether p is this parameter or a copy of it.
  bool same_leaf(parameter const& p) const noexcept { return leaf_ == p.leaf_; }
  /// The current values.
  tensor<T> value() const { return this->values(); }

  /// What backward accumulated so far (empty before the first backward that reached it, as
  /// torch's None).
  std::optional<tensor<T>> const& grad() const noexcept { return leaf_->grad; }
  /// Forgets the accumulated gradient (torch's zero_grad(set_to_none=True)).
  void zero_grad() noexcept { leaf_->grad.reset(); }
  /// Adds g to the accumulated gradient (g has the parameter's shape).
  void accumulate_grad(tensor<T> const& g) {
    if (g.shape() != this->shape())
      detail::throw_shape_error("parameter::accumulate_grad", "the gradient's shape is not the parameter's",
                                this->shape(), g.shape());
    auto& acc = leaf_->grad;
    if (acc)
      *acc = eval(*acc + g);
    else
      acc = g;
  }

  /// New values for the same leaf (an optimiser's step): the variables keep their identity.
  void assign(tensor<T> const& v) {
    if (v.shape() != this->shape())
      detail::throw_shape_error("parameter::assign", "the new values' shape is not the parameter's", this->shape(),
                                v.shape());
    refresh();
    if (auto* b = block()) return b->rebind(v.data(), b->first, b->epoch);
    var<T>* e = shared_elements();
    for (std::size_t i = 0; i < v.size(); ++i) e[i] = var<T>::recorded(v.data()[i], e[i].index(), e[i].epoch());
  }

  /// New values written in place by f(T* values) (an optimiser's step: one pass, no copy), the
  /// variables keeping their identity, as assign(). A tensor taken from value() before keeps
  /// the values it had.
  template <class F>
  void update_values(F&& f) {
    refresh();
    if (auto* b = block()) return b->update(f);
    tensor<T> v = value();
    f(v.data());
    assign(v);
  }

  /// Whether the variables belong to a recording that is still live on this thread's tape.
  bool live() const {
    if (this->size() == 0) return true;
    auto const* b = block();
    return tape<T>::current().is_live(b ? b->epoch : this->data()[0].epoch());
  }
  /// Makes the elements independent variables on the current tape again if their recording
  /// ended (values kept).
  void refresh() {
    if (live()) return;
    if (auto* b = block()) {
      auto& tp = tape<T>::current();
      index_type const first = tp.new_variables(this->size());
      return b->rebind(nullptr, first, tp.epoch());
    }
    var<T>* e = shared_elements();
    for (std::size_t i = 0; i < this->size(); ++i) e[i] = var<T>(e[i].value());
  }

 private:
  struct leaf {
    std::string name;
    std::optional<tensor<T>> grad;
  };
  // A parameter is normally one block of variables kept as values (as any tensor made from
  // numbers), which products and expressions read without making its elements; assign() and
  // refresh() rebind that block in place for every alias. One that has elements of its own (a
  // write through a non-const accessor gave it them) has them written in place instead. Both
  // bypass copy-on-write on purpose: see the file comment.
  detail::var_values<var<T>>* block() const noexcept { return detail::tensor_access::whole_block(*this); }
  var<T>* shared_elements() const { return const_cast<var<T>*>(base::data()); }

  std::shared_ptr<leaf> leaf_;
  std::shared_ptr<detail::parameter_registry<T>> registry_ = detail::parameter_registry<T>::mine();
};

/// The parameters of a model, by reference (MindSpore's ParameterTuple, what a model's
/// trainable_params() returns).
template <class T>
using parameter_list = std::vector<std::reference_wrapper<parameter<T>>>;

/// The concatenation of parameter lists (a model made of layers lists all their parameters).
template <class T, class... L>
parameter_list<T> concat(parameter_list<T> first, L const&... rest) {
  (first.insert(first.end(), rest.begin(), rest.end()), ...);
  return first;
}

}  // namespace adx
