// SPDX-License-Identifier: MIT
// adx: the seeds' reverse-mode gradient APIs over the tape. The API layer only composes: it
// checks its arguments, seeds the outputs, sweeps once and collects the inputs' adjoints.
//
//   gradients(ys, xs, grad_ys, stop_gradients, unconnected, aggregation)      tf.gradients
//   autograd::grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
//   autograd::backward(tensors, grad_tensors, retain_graph, create_graph[, inputs])
//
// Each also takes its optional arguments as one options aggregate written with designated
// initialisers, autograd::grad(y, xs, {.create_graph = true}); the options, the rule by which a
// braced list picks one form or the other, and gradient_list (what gradients and grad return)
// are in gradients_options.hpp. The options forms only forward to the positional ones.
//
// ys / outputs and xs / inputs are a var<T> or a tensor<var<T>>, or a std::vector of either.
// Inputs recorded one nesting level up (var<var<T>> when the outputs are var<T>) are taken at
// their value, so a gradient of a gradient is asked with the same variables, as with repeated
// tf.gradients. Gradients are T (or tensor<T>); with nested scalars they are themselves
// differentiable.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "adx/api/container_kind.hpp"
#include "adx/api/gradients_options.hpp"
#include "adx/api/parameter.hpp"
#include "adx/api/sweep_request.hpp"
#include "adx/reverse/var.hpp"
#include "adx/tensor/elementwise.hpp"
#include "adx/tensor/tensor.hpp"

namespace adx {

namespace detail {

/// An expression evaluated (and recorded) into its active value, a parameter as its tensor;
/// anything else as it is.
template <class X>
auto to_active(X const& x) {
  if constexpr (tensor_type<X>)
    return tensor<typename X::value_type>(x);
  else if constexpr (ad_expression<X>)
    return ad_type_t<X>(x);
  else if constexpr (tensor_operand<X> && !tensor_type<X>)
    return eval(x);
  else
    return x;
}
/// e, or what it refers to (the entries of a parameter_list).
template <class E>
decltype(auto) unwrap_ref(E const& e) {
  if constexpr (!std::is_same_v<std::unwrap_reference_t<E>, E>)
    return e.get();
  else
    return (e);
}

template <class X>
struct parameter_element {
  using type = void;
};
template <class T>
struct parameter_element<parameter<T>> {
  using type = T;
};
template <class T>
struct parameter_element<std::reference_wrapper<parameter<T>>> {
  using type = T;
};
template <class T, class A>
struct parameter_element<std::vector<T, A>> : parameter_element<T> {};

/// Inputs given as parameters: those whose recording has ended get new variables on the
/// current tape first (as grad does), so that an unused one is unconnected, not stale.
template <class X>
void refresh_parameters() {
  using T = typename parameter_element<X>::type;
  if constexpr (!std::is_void_v<T>) parameter_registry<T>::refresh_all();
}

/// The inputs' names for gradient_list's messages: one per input (a parameter's name, or "" for
/// a variable), or none when no input is a parameter.
template <class X>
std::vector<std::string> input_names(X const& xs) {
  std::vector<std::string> names;
  if constexpr (!std::is_void_v<typename parameter_element<X>::type>) {
    if constexpr (is_std_vector<X>::value) {
      names.reserve(xs.size());
      for (auto const& e : xs) names.push_back(unwrap_ref(e).name());
    } else {
      names.push_back(unwrap_ref(xs).name());
    }
  }
  return names;
}

/// One output or input, or a std::vector of them (expressions, parameters and parameter_list
/// entries taken to their active values), as a std::vector of active values.
template <class X>
auto as_list(X const& x0) {
  if constexpr (is_std_vector<X>::value) {
    using E = decltype(to_active(unwrap_ref(std::declval<typename X::value_type const&>())));
    if constexpr (std::is_same_v<E, typename X::value_type>) {
      return x0;
    } else {
      std::vector<E> x;
      x.reserve(x0.size());
      for (auto const& e : x0) x.push_back(to_active(unwrap_ref(e)));
      return x;
    }
  } else {
    auto x = to_active(x0);
    return std::vector<decltype(x)>{x};
  }
}
template <class X>
using list_item_t = typename decltype(as_list(std::declval<X const&>()))::value_type;

/// The gradient type of outputs Y (T or tensor<T>).
template <class Y>
using grad_of_t = typename active_of<list_item_t<Y>>::grad;
/// The positional forms' weights (grad_ys, grad_outputs, grad_tensors) for outputs Y: a
/// std::vector<grad_of_t<Y>>, or what converts to one. The weights are a template parameter so
/// that an options form is the more specialised template (gradients_options.hpp).
template <class W, class Y>
concept grad_weights = std::convertible_to<W const&, std::vector<grad_of_t<Y>>>;

/// x taken down to the scalar type S (var<var<T>> -> its value var<T>, elementwise for tensors).
template <class S, class X>
auto lower_to(X const& x) {
  if constexpr (std::is_same_v<X, S> || std::is_same_v<X, tensor<S>>) {
    return x;
  } else if constexpr (tensor_type<X>) {
    static_assert(level_v<typename X::value_type> > level_v<S>,
                  "adx: an input is recorded at a lower nesting level than the outputs");
    return lower_to<S>(x.values());
  } else {
    static_assert(level_v<X> > level_v<S>, "adx: an input is recorded at a lower nesting level than the outputs");
    return lower_to<S>(x.value());
  }
}

/// Writes the adjoints of the n elements at(i) after the last sweep to out (differentiable with
/// create_graph, constants otherwise); returns whether the sweep reached any of them.
template <class T, class At>
bool collect_adjoints(tape<T> const& tp, std::size_t n, At&& at, bool create_graph, T* out) {
  bool reached = false;
  for (std::size_t i = 0; i < n; ++i) {
    auto const& e = at(i);
    reached |= tp.reached(e.index());
    T const a = tp.adjoint(e.index(), e.epoch());
    out[i] = create_graph ? a : adx::stop_gradient(a);
  }
  return reached;
}

/// Element i of a parameter as a var: a block's variable is read without making the elements.
template <class T>
auto parameter_var_at(parameter<T> const& p) {
  return [&p, b = tensor_access::block(p)](std::size_t i) {
    if (b.first) return var<T>::recorded_active(T{}, b.first + static_cast<index_type>(i), b.epoch);
    return std::as_const(p).data()[i];
  };
}

/// x's gradient after the last sweep, as collect_adjoints reads it (`connected`: whether the
/// sweep reached an element): a tensor, or for one var a number (no buffer).
template <class XA, class T, class X>
typename XA::grad read_adjoints(tape<T> const& tp, X const& x, bool create_graph, bool& connected) {
  auto const at = [&](std::size_t i) -> auto const& { return XA::at(x, i); };
  if constexpr (tensor_type<typename XA::grad>) {
    typename XA::grad g(XA::shape_of(x));
    connected = collect_adjoints(tp, g.size(), at, create_graph, g.data());
    return g;
  } else {
    T g;
    connected = collect_adjoints(tp, 1, at, create_graph, &g);
    return g;
  }
}

}  // namespace detail

/// tf.gradients: the list (one entry per x) of sum over ys of grad_ys-weighted dy/dx, or an
/// empty optional (unconnected_gradients::none) / zeros (::zero) where nothing reached x.
/// grad_ys: empty (ones) or one entry per y with y's shape (a std::vector<G>, G as
/// gradients_options). The result is a gradient_list.
template <class Y, class X, detail::grad_weights<Y> W = std::vector<detail::grad_of_t<Y>>>
auto gradients(Y const& ys, X const& xs, W const& grad_ys_given = {}, stop_list const& stop_gradients = {},
               unconnected_gradients unconnected = unconnected_gradients::none,
               aggregation_method aggregation = aggregation_method::add_n) {
  std::vector<detail::grad_of_t<Y>> const& grad_ys = grad_ys_given;
  using YA = detail::active_of<detail::list_item_t<Y>>;
  using S = typename YA::element;
  using T = value_type_t<S>;
  auto const ylist = detail::as_list(ys);
  detail::refresh_parameters<X>();
  auto const xlist0 = detail::as_list(xs);
  if (static_cast<int>(aggregation) < 0 || static_cast<int>(aggregation) > 2)
    throw value_error("adx: gradients: Invalid aggregation_method specified " +
                      std::to_string(static_cast<int>(aggregation)) + ".");
  if (unconnected != unconnected_gradients::none && unconnected != unconnected_gradients::zero)
    throw value_error("adx: gradients: Unknown value for unconnected_gradients: " +
                      std::to_string(static_cast<int>(unconnected)));
  if (!grad_ys.empty() && grad_ys.size() != ylist.size())
    throw value_error("adx: gradients: Passed " + std::to_string(grad_ys.size()) + " grad_ys for " +
                      std::to_string(ylist.size()) + " ys");
  detail::sweep_request<T> request;
  request.stop_unconnected = true;  // TensorFlow's Floor, Ceil and Round have no gradient
  for (std::size_t k = 0; k < ylist.size(); ++k) {
    auto const& y = ylist[k];
    if (!grad_ys.empty()) {
      shape const gs = [&] {
        if constexpr (tensor_type<typename YA::grad>)
          return grad_ys[k].shape();
        else
          return shape{};
      }();
      if (YA::shape_of(y) != gs)
        throw value_error("adx: gradients: grad_ys[" + std::to_string(k) + "] has shape " + gs.str() +
                          ", incompatible with ys[" + std::to_string(k) + "] of shape " + YA::shape_of(y).str());
    }
    for (std::size_t i = 0; i < YA::size(y); ++i) {
      T w = detail::constant<T>(1);
      if (!grad_ys.empty()) {
        if constexpr (tensor_type<typename YA::grad>)
          w = grad_ys[k].data()[i];
        else
          w = grad_ys[k];
      }
      request.seed(YA::at(y, i), w);
    }
  }
  auto& tp = tape<T>::current();
  auto const& stops = stop_gradients.entries;
  for (std::size_t j = 0; j < stops.size();) {  // one group (a variable's levels) at a time
    std::size_t end = j;
    bool found = false;
    for (; end < stops.size() && stops[end].group == stops[j].group; ++end)
      if (!found && stops[end].tape == &tp) {
        tp.check_live(stops[end].epoch);  // stale_variable_error for a var of a recording that ended
        request.stops.push_back(stops[end].index);
        found = true;
      }
    if (!found)
      throw value_error(
          "adx: gradients: a stop_gradients entry belongs to another tape (another scalar type, a lower nesting "
          "level than ys, or another thread's)");
    j = end;
  }
  detail::private_sweep<T> own_sweep;
  detail::run_in_grad_mode(request, true);  // tf.gradients' results are always differentiable

  using XItem = decltype(detail::lower_to<S>(xlist0[0]));
  using XA = detail::active_of<XItem>;
  auto out = detail::gradient_list_access::make<typename XA::grad>("gradients", "unconnected_gradients::none",
                                                                   detail::input_names(xs));
  out.reserve(xlist0.size());
  for (auto const& x0 : xlist0) {
    auto const x = detail::lower_to<S>(x0);
    bool connected = false;
    typename XA::grad g = detail::read_adjoints<XA>(tp, x, true, connected);
    if (connected || unconnected == unconnected_gradients::zero)
      out.emplace_back(std::move(g));
    else
      out.emplace_back(std::nullopt);
  }
  return out;
}

/// tf.gradients with its keyword arguments as one aggregate (gradients_options.hpp):
/// gradients(ys, xs, {.stop_gradients = {a, b}, .unconnected_gradients = unconnected_gradients::zero}).
template <class Y, class X, std::same_as<detail::grad_of_t<Y>> G = detail::grad_of_t<Y>>
auto gradients(Y const& ys, X const& xs, gradients_options<G> const& options) {
  return adx::gradients(ys, xs, options.grad_ys, options.stop_gradients, options.unconnected_gradients,
                        options.aggregation_method);
}

/// The adjoint of x after the last sweep of its tape (zero where the sweep did not reach).
template <class T>
T adjoints(var<T> const& x) {
  return x.adjoint();
}
/// Writes the adjoints of a tensor's elements after the last sweep of their tape (zero where
/// the sweep did not reach) to out, in row-major order (out.size() must be x.size()). One
/// liveness check per recording, not per element.
template <class T>
void adjoints(tensor<var<T>> const& x, std::span<T> out) {
  if (out.size() != x.size())
    detail::throw_shape_error("adjoints", "the output span has " + std::to_string(out.size()) + " elements for",
                              x.shape());
  auto const& tp = tape<T>::current();
  if (detail::var_block const b = detail::tensor_access::block(x); b.first != 0) {  // one block: a copy
    tp.check_live(b.epoch);
    tp.adjoints_of_live(b.first, x.size(), out.data());
    return;
  }
  adjoints(std::span<var<T> const>(x.data(), x.size()), out);  // as a list of vars (reverse/var.hpp)
}
/// The adjoints of a tensor's elements after the last sweep of their tape, as a tensor of the
/// same shape.
template <class T>
tensor<T> adjoints(tensor<var<T>> const& x) {
  tensor<T> g(x.shape());
  adjoints(x, std::span<T>(g.data(), g.size()));
  return g;
}

namespace detail {

/// Seeds request with torch's checks on outputs and grad_outputs (`api` names the caller).
template <class YA, class T, class YList, class G>
void seed_torch_outputs(sweep_request<T>& request, YList const& ylist, std::vector<G> const& grad_outputs,
                        std::string const& api) {
  if (!grad_outputs.empty() && grad_outputs.size() != ylist.size())
    throw value_error("adx: " + api + ": got " + std::to_string(ylist.size()) + " tensors and " +
                      std::to_string(grad_outputs.size()) + " gradients");
  for (std::size_t k = 0; k < ylist.size(); ++k) {
    auto const& y = ylist[k];
    bool requires_grad = false;
    for (std::size_t i = 0; i < YA::size(y); ++i) requires_grad |= YA::at(y, i).index() != 0;
    if (!requires_grad)
      throw value_error("adx: " + api + ": element " + std::to_string(k) +
                        " of tensors does not require grad and does not have a grad_fn");
    if (grad_outputs.empty() && YA::size(y) != 1)
      throw value_error("adx: " + api + ": grad can be implicitly created only for scalar outputs");
    if constexpr (tensor_type<G>) {
      if (!grad_outputs.empty() && grad_outputs[k].shape() != y.shape())
        throw value_error("adx: " + api + ": Mismatch in shape: grad_output[" + std::to_string(k) +
                          "] has a shape of " + grad_outputs[k].shape().str() + " and output[" + std::to_string(k) +
                          "] has a shape of " + y.shape().str() + ".");
    }
    for (std::size_t i = 0; i < YA::size(y); ++i) {
      T w = detail::constant<T>(1);
      if (!grad_outputs.empty()) {
        if constexpr (tensor_type<G>)
          w = grad_outputs[k].data()[i];
        else
          w = grad_outputs[k];
      }
      request.seed(YA::at(y, i), w);
    }
  }
}

/// `inputs_given`: the leaves are backward's `inputs`, and only the operations leading to them
/// are used and released (torch runs only those); otherwise every operation the sweep reached is.
template <class Y, class G, class T>
void backward_impl(Y const& tensors, std::vector<G> const& grad_tensors, std::optional<bool> retain_graph,
                   bool create_graph, std::vector<parameter<T>*> const& leaves, bool inputs_given) {
  using YA = active_of<list_item_t<Y>>;
  auto const ylist = as_list(tensors);
  sweep_request<T> request;
  seed_torch_outputs<YA>(request, ylist, grad_tensors, "autograd::backward");
  request.torch_release = true;
  request.release = !retain_graph.value_or(create_graph);
  if (inputs_given) {
    request.inputs.emplace();
    for (auto* p : leaves) {
      if (!p->live()) continue;  // recorded in a recording that has ended: not in this graph
      auto const at = parameter_var_at(*p);
      for (std::size_t i = 0; i < p->size(); ++i) request.inputs->push_back(at(i).index());
    }
  }
  private_sweep<T> own_sweep;
  detail::run_in_grad_mode(request, create_graph);
  auto& tp = tape<T>::current();
  for (auto* p : leaves) {
    if (!p->live()) continue;  // recorded in a recording that has ended: not in this graph
    tensor<T> g(p->shape());
    if (collect_adjoints(tp, p->size(), parameter_var_at(*p), create_graph, g.data())) p->accumulate_grad(g);
  }
}

}  // namespace detail

namespace autograd {

/// torch.autograd.grad: one entry per input, sum over outputs of J^T grad_outputs. An input
/// that no gradient reached is an error unless allow_unused (then an empty optional).
/// retain_graph (default: create_graph) keeps the graph for another sweep; without it, the
/// operations on the inputs' paths that keep values are released, and a later sweep that uses
/// one of them throws (api/release.hpp). With create_graph the gradients of nested scalars
/// stay differentiable; otherwise they are constants.
/// The result is a gradient_list; its value(i) names an empty entry's input.
template <class Y, class X, detail::grad_weights<Y> W = std::vector<detail::grad_of_t<Y>>>
auto grad(Y const& outputs, X const& inputs, W const& grad_outputs_given = {},
          std::optional<bool> retain_graph = std::nullopt, bool create_graph = false, bool allow_unused = false) {
  std::vector<detail::grad_of_t<Y>> const& grad_outputs = grad_outputs_given;
  using YA = detail::active_of<detail::list_item_t<Y>>;
  using S = typename YA::element;
  using T = value_type_t<S>;
  auto const ylist = detail::as_list(outputs);
  detail::refresh_parameters<X>();
  auto const xlist0 = detail::as_list(inputs);
  if (xlist0.empty()) throw value_error("adx: autograd::grad: grad requires non-empty inputs.");
  detail::sweep_request<T> request;
  detail::seed_torch_outputs<YA>(request, ylist, grad_outputs, "autograd::grad");
  request.torch_release = true;
  request.release = !retain_graph.value_or(create_graph);

  auto& tp = tape<T>::current();
  using XItem = decltype(detail::lower_to<S>(xlist0[0]));
  using XA = detail::active_of<XItem>;
  std::vector<XItem> xlist;
  for (auto const& x0 : xlist0) {
    xlist.push_back(detail::lower_to<S>(x0));
    bool requires_grad = false;
    for (std::size_t i = 0; i < XA::size(xlist.back()); ++i) requires_grad |= XA::at(xlist.back(), i).index() != 0;
    if (!requires_grad)
      throw value_error("adx: autograd::grad: One of the differentiated Tensors does not require grad");
  }
  request.inputs.emplace();  // torch runs, and frees, only the operations that lead to the inputs
  for (auto const& x : xlist) {
    epoch_type live = 0;
    for (std::size_t i = 0; i < XA::size(x); ++i) {
      auto const& e = XA::at(x, i);
      if (e.index() != 0) tp.check_live(e.epoch(), live);  // before the sweep: a stale index names another var
      request.inputs->push_back(e.index());
    }
  }
  detail::private_sweep<T> own_sweep;
  detail::run_in_grad_mode(request, create_graph);

  auto out = detail::gradient_list_access::make<typename XA::grad>("autograd::grad", "allow_unused",
                                                                   detail::input_names(inputs));
  out.reserve(xlist.size());
  for (auto const& x : xlist) {
    bool connected = false;
    typename XA::grad g = detail::read_adjoints<XA>(tp, x, create_graph, connected);
    if (!connected && !allow_unused)
      throw value_error(
          "adx: autograd::grad: One of the differentiated Tensors appears to not have been used in the graph. Pass "
          "{.allow_unused = true} (positional form: true as the sixth argument) if this is the desired behavior.");
    if (connected)
      out.emplace_back(std::move(g));
    else
      out.emplace_back(std::nullopt);
  }
  return out;
}

/// torch.autograd.backward: sums (+=) the gradients of `tensors` (weighted by grad_tensors, which
/// may be empty for one-element outputs) into .grad() of every parameter the sweep reaches, or
/// only of `inputs`. Parameters the sweep does not reach keep their .grad() (torch's None stays
/// None). retain_graph and create_graph as for autograd::grad.
template <class Y, detail::grad_weights<Y> W = std::vector<detail::grad_of_t<Y>>>
void backward(Y const& tensors, W const& grad_tensors_given = {}, std::optional<bool> retain_graph = std::nullopt,
              bool create_graph = false) {
  using T = value_type_t<typename detail::active_of<detail::list_item_t<Y>>::element>;
  std::vector<detail::grad_of_t<Y>> const& grad_tensors = grad_tensors_given;
  detail::backward_impl(tensors, grad_tensors, retain_graph, create_graph, detail::parameter_registry<T>::leaves(),
                        false);
}
template <class Y, class T>
void backward(Y const& tensors,
              std::vector<typename detail::active_of<detail::list_item_t<Y>>::grad> const& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, parameter_list<T> const& inputs) {
  if (inputs.empty()) throw value_error("adx: autograd::backward: 'inputs' argument to backward() cannot be empty.");
  std::vector<parameter<T>*> leaves;
  for (auto const& r : inputs)
    if (std::none_of(leaves.begin(), leaves.end(), [&](auto* q) { return q->same_leaf(r.get()); }))
      leaves.push_back(&r.get());
  detail::backward_impl(tensors, grad_tensors, retain_graph, create_graph, leaves, true);
}

// The options forms (gradients_options.hpp: which form a braced list picks). Each is the
// positional call with the options' fields in order.

/// torch.autograd.grad with its keyword arguments as one aggregate:
/// autograd::grad(y, xs, {.grad_outputs = {g}, .create_graph = true, .allow_unused = true}).
template <class Y, class X, std::same_as<detail::grad_of_t<Y>> G = detail::grad_of_t<Y>>
auto grad(Y const& outputs, X const& inputs, grad_options<G> const& options) {
  return autograd::grad(outputs, inputs, options.grad_outputs, options.retain_graph, options.create_graph,
                        options.allow_unused);
}
/// torch.autograd.backward with its keyword arguments as one aggregate:
/// autograd::backward(loss, {.retain_graph = true, .inputs = net.trainable_params()}).
template <class Y, std::same_as<detail::grad_of_t<Y>> G = detail::grad_of_t<Y>>
void backward(Y const& tensors, backward_options<G> const& options) {
  if (options.inputs.given)
    autograd::backward(tensors, options.grad_tensors, options.retain_graph, options.create_graph,
                       options.inputs.refs());
  else
    autograd::backward(tensors, options.grad_tensors, options.retain_graph, options.create_graph);
}

}  // namespace autograd
}  // namespace adx
