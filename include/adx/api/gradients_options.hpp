// SPDX-License-Identifier: MIT
// adx: the arguments and results of the gradient APIs of gradients.hpp as C++ types.
//
//   gradients_options<G>           tf.gradients' keywords: grad_ys, stop_gradients (a stop_list),
//                                  unconnected_gradients, aggregation_method
//   autograd::grad_options<G>      torch.autograd.grad's: grad_outputs, retain_graph, create_graph,
//                                  allow_unused
//   autograd::backward_options<G>  torch.autograd.backward's: grad_tensors, retain_graph,
//                                  create_graph, inputs
//   gradient_list<G>               what gradients and autograd::grad return: one std::optional
//                                  per input, and value(i), which throws where it is empty
//
// G is the outputs' gradient type: T for var<T> outputs, tensor<T> for tensor<var<T>> ones.
// The options are aggregates written with designated initialisers, in their declaration order,
// naming only what differs from the defaults; each default is that of the positional argument
// the field stands for:
//
//     autograd::grad(y, xs, {.retain_graph = true, .create_graph = true})
//     autograd::grad(y, xs, {}, true, true)                          // the same call
//     autograd::backward(loss, {.inputs = net.trainable_params()})
//     gradients(ys, xs, {.stop_gradients = {a, b}})
//
// Which form a braced list picks (the third argument; backward's second). The rule: a list
// with designators, or an options object, is the options; a list without designators is the
// positional form's weights (grad_outputs / grad_ys / grad_tensors), so `{g}`, `{g1, g2}`,
// `{{1.0, 2.0}}` and `{{{1, 0}, {0, 1}}}` (one 2x2 weight) mean what they mean positionally.
// How: the options aggregates begin with a member that nothing converts to
// (designators_only_), so a list without designators cannot initialise them. `{}` fits both
// forms and means the same in both (no weights, every default); the options form takes it, as
// the more specialised template (the positional form takes its weights as a template parameter,
// any type convertible to std::vector<G>). GCC 12 also tries a designated list on the
// positional form's std::vector; the same ordering gives that list to the options form.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "adx/api/container_kind.hpp"
#include "adx/api/parameter.hpp"
#include "adx/core/error.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

/// What tf.gradients returns for an input no gradient reached.
enum class unconnected_gradients { none, zero };
/// How tf.gradients sums several contributions; adx accepts the three values and sums in the
/// sweep's order (only rounding may differ between them, as in TensorFlow).
enum class aggregation_method { add_n = 0, experimental_tree = 1, experimental_accumulate_n = 2 };

template <class G>
class gradient_list;

namespace detail {

/// An output or input of the gradient APIs (var<T> or tensor<var<T>>, nothing else): its
/// container kind and its gradient's type (T or tensor<T>).
template <class X>
struct active_of;
template <class T>
struct active_of<var<T>> : container_kind<var<T>> {
  using grad = T;
};
template <class T>
struct active_of<tensor<var<T>>> : container_kind<tensor<var<T>>> {
  using grad = tensor<T>;
};

template <class X>
struct is_std_vector : std::false_type {};
template <class X, class A>
struct is_std_vector<std::vector<X, A>> : std::true_type {};

/// A type derived from a tensor (a parameter), not a tensor itself.
template <class X>
concept tensor_subclass = requires {
  typename X::value_type;
}
&&std::derived_from<X, tensor<typename X::value_type>> && !std::same_as<X, tensor<typename X::value_type>>;
template <class X>
struct is_reference_wrapper : std::false_type {};
template <class X>
struct is_reference_wrapper<std::reference_wrapper<X>> : std::true_type {};

/// The scalar type T of a gradient type G (T or tensor<T>).
template <class G>
struct grad_scalar {
  using type = G;
};
template <class T>
struct grad_scalar<tensor<T>> {
  using type = T;
};

/// The first member of every options aggregate: only default-constructible, so that a braced
/// list without designators cannot initialise the aggregate (see the file comment).
struct designators_only {
  designators_only() = default;
};

/// Gives gradients and autograd::grad what their gradient_list needs for its messages.
struct gradient_list_access {
  template <class G>
  static gradient_list<G> make(char const* api, char const* absent, std::vector<std::string> names) {
    gradient_list<G> out;
    out.api_ = api;
    out.absent_ = absent;
    out.names_ = std::move(names);
    return out;
  }
};

}  // namespace detail

/// A list of tensors or scalars that tf.gradients treats as constants (its stop_gradients):
/// their own gradient is collected but nothing flows on to what they were computed from. Each
/// variable is kept with its recording and its tape, so that gradients() can refuse one that is
/// stale or belongs to another tape (its index could name another statement by then). A
/// variable of a nested type (var<var<T>>) is kept at each of its levels, as one group:
/// gradients() takes the level its outputs are recorded at, as it does for xs.
class stop_list {
 public:
  /// No stops.
  stop_list() = default;
  /// The variables of xs... (vars, tensors of vars, parameters, vectors of them).
  template <class... X>
  requires(sizeof...(X) > 0) stop_list(X const&... xs) { (add(xs), ...); }

  /// Adds the variables of x (a var, a tensor of vars, a parameter, a vector of them).
  template <class X>
  void add(X const& x) {
    if constexpr (detail::is_std_vector<X>::value) {
      for (auto const& e : x) add(e);
    } else if constexpr (detail::tensor_subclass<X>) {
      add(static_cast<tensor<typename X::value_type> const&>(x));  // a parameter: its tensor of variables
    } else if constexpr (detail::is_reference_wrapper<X>::value) {
      add(x.get());  // a parameter_list's entry
    } else {
      using A = detail::active_of<X>;
      for (std::size_t i = 0; i < A::size(x); ++i) add_levels(A::at(x, i), groups_++);
    }
  }
  /// One variable at one level.
  struct entry {
    index_type index;   ///< its statement
    epoch_type epoch;   ///< its recording
    void const* tape;   ///< the thread's tape of the variable's value type when it was added
    std::size_t group;  ///< the variable it is a level of
  };
  std::vector<entry> entries;  ///< every variable added, at each of its levels

 private:
  template <class V>
  void add_levels(V const& v, std::size_t group) {
    if (v.index() != 0) entries.push_back({v.index(), v.epoch(), &tape<value_type_t<V>>::current(), group});
    if constexpr (ad_scalar<value_type_t<V>>) add_levels(v.value(), group);
  }
  std::size_t groups_ = 0;
};

/// tf.gradients' keyword arguments: gradients(ys, xs, {.stop_gradients = {a, b}}).
template <class G>
struct gradients_options {
  detail::designators_only designators_only_{};  ///< (written with designators only)
  std::vector<G> grad_ys{};                      ///< one weight per y, with y's shape; empty: ones
  stop_list stop_gradients{};                    ///< constants whose own gradient is still collected
  /// An input nothing reached: an empty optional (none) or zeros (zero).
  adx::unconnected_gradients unconnected_gradients = adx::unconnected_gradients::none;
  adx::aggregation_method aggregation_method = adx::aggregation_method::add_n;  ///< accepted; sums in order
};

/// What gradients and autograd::grad return: one entry per input, in the inputs' order, empty
/// where no gradient reached the input (tf.gradients' None; torch.autograd.grad's None with
/// allow_unused). It is a std::vector of std::optional, so g[i], *g[i], g[i].has_value(), size()
/// and iteration read it; value(i) is the checked read.
///
///     auto g = autograd::grad(loss, net.trainable_params(), {.allow_unused = true});
///     tensor<double> dw = g.value(0);   // adx::gradient_error naming input 0 where it is empty
template <class G>
class gradient_list : public std::vector<std::optional<G>> {
 public:
  /// Input i's gradient. Throws adx::gradient_error naming the input (its position, and its
  /// name for a named parameter) where no gradient reached it, and adx::value_error for an i
  /// past the end.
  G const& value(std::size_t i) const& { return *checked(i); }
  /// Input i's gradient (as above), writable.
  G& value(std::size_t i) & { return *checked(i); }
  /// Input i's gradient (as above), moved out of a temporary list.
  G value(std::size_t i) && { return std::move(*checked(i)); }

 private:
  friend struct detail::gradient_list_access;
  std::optional<G> const& checked(std::size_t i) const {
    auto const& self = static_cast<std::vector<std::optional<G>> const&>(*this);
    if (i >= self.size())
      throw value_error(prefix() + "no input " + std::to_string(i) + " (there are " + std::to_string(self.size()) +
                        ")");
    if (!self[i]) {
      std::string const name = i < names_.size() && !names_[i].empty() ? " ('" + names_[i] + "')" : "";
      throw gradient_error(prefix() + "input " + std::to_string(i) + name + " received no gradient (" +
                           (absent_ ? absent_ : "empty") + ")");
    }
    return self[i];
  }
  std::string prefix() const { return std::string("adx: ") + (api_ ? api_ : "gradient_list") + ": "; }
  std::optional<G>& checked(std::size_t i) { return const_cast<std::optional<G>&>(std::as_const(*this).checked(i)); }

  char const* api_ = nullptr;       // the function that made the list, for the messages
  char const* absent_ = nullptr;    // why an entry may be empty (the option that allowed it)
  std::vector<std::string> names_;  // the inputs' names (a parameter's, or ""), or none at all
};

namespace autograd {

/// torch.autograd.grad's keyword arguments: autograd::grad(y, xs, {.create_graph = true}).
template <class G>
struct grad_options {
  detail::designators_only designators_only_{};  ///< (written with designators only)
  std::vector<G> grad_outputs{};       ///< one weight per output, with its shape; empty: ones (one-element outputs)
  std::optional<bool> retain_graph{};  ///< keep the graph for another sweep; unset: as create_graph
  bool create_graph = false;           ///< differentiable gradients (nested scalars)
  bool allow_unused = false;           ///< an input no gradient reached is an empty entry, not an error
};

/// backward's inputs as the options hold them: unset (every parameter the sweep reaches), or a
/// module's trainable_params(), a std::vector of parameters or a braced list of them
/// ({.inputs = {w, b}}). Kept as copies, which are the same leaves (api/parameter.hpp), so that
/// the options may outlive a temporary list they were given.
template <class T>
struct parameter_inputs {
  /// The parameters (aliases of those given; mutable: backward accumulates into the leaves).
  mutable std::vector<parameter<T>> list;
  bool given = false;  ///< whether inputs were given (an empty list given is an error)
  /// Unset.
  parameter_inputs() = default;
  /// From a parameter_list (references).
  parameter_inputs(parameter_list<T> const& ps) : list(ps.begin(), ps.end()), given(true) {}
  /// From parameters.
  parameter_inputs(std::vector<parameter<T>> ps) : list(std::move(ps)), given(true) {}
  /// From a braced list of parameters.
  parameter_inputs(std::initializer_list<parameter<T>> ps) : list(ps), given(true) {}
  /// As the positional form takes them.
  parameter_list<T> refs() const { return {list.begin(), list.end()}; }
};

/// torch.autograd.backward's keyword arguments: autograd::backward(loss, {.inputs = params}).
template <class G>
struct backward_options {
  using scalar = typename detail::grad_scalar<G>::type;  ///< the parameters' element type
  detail::designators_only designators_only_{};          ///< (written with designators only)
  std::vector<G> grad_tensors{};       ///< one weight per output, with its shape; empty: ones (one-element outputs)
  std::optional<bool> retain_graph{};  ///< keep the graph for another sweep; unset: as create_graph
  bool create_graph = false;           ///< differentiable gradients (nested scalars)
  /// Accumulate into these parameters only (given, it may not be empty); unset: every parameter
  /// the sweep reaches.
  parameter_inputs<scalar> inputs{};
};

}  // namespace autograd
}  // namespace adx
