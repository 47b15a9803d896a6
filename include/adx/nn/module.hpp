// SPDX-License-Identifier: MIT
// adx: modules and their composition. A module is anything callable on a tensor; one with
// trainable parameters also has trainable_params() (a parameter_list), as nn::dense does.
// nn::sequential chains modules, as torch.nn.Sequential and MindSpore's nn.SequentialCell,
// and lists the parameters of all of them, recursively (a sequential inside a sequential, or a
// user's own module with trainable_params()):
//
//     nn::sequential net{nn::dense<double>(2, 16), nn::act::tanh{}, nn::dense<double>(16, 1)};
//     auto y = net(x);                                   // dense, tanh, dense
//     optim::adam<double> opt(net.trainable_params());   // the four parameters, in order
//
// The activations as modules are in nn::act (torch's nn.ReLU, nn.Tanh, ...): stateless
// function objects calling adx's functions, so that every mode and nesting differentiates them.
// Modules are held by value; copies of a parameter are the same leaf, so a sequential made from
// layers shares their parameters with them.
#pragma once

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "adx/api/parameter.hpp"
#include "adx/rules.hpp"
#include "adx/tensor/softmax.hpp"

namespace adx {
namespace detail {
template <class L>
struct is_parameter_list : std::false_type {};
template <class T>
struct is_parameter_list<parameter_list<T>> : std::true_type {};
}  // namespace detail

namespace nn {

/// A module with trainable parameters: its trainable_params() is a parameter_list.
template <class M>
concept has_parameters = requires(M& m) {
  m.trainable_params();
}
&&detail::is_parameter_list<std::remove_cvref_t<decltype(std::declval<M&>().trainable_params())>>::value;

/// Activations as modules (torch.nn's ReLU, Tanh, ...). Each calls the adx function of its name.
namespace act {
/// torch's nn.ReLU: adx::relu of its argument.
struct relu {
  /// relu(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::relu(x);
  }
};
/// torch's nn.Tanh: adx::tanh of its argument.
struct tanh {
  /// tanh(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::tanh(x);
  }
};
/// torch's nn.Sigmoid: adx::sigmoid of its argument.
struct sigmoid {
  /// sigmoid(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::sigmoid(x);
  }
};
/// torch's nn.LogSigmoid: adx::logsigmoid of its argument.
struct logsigmoid {
  /// logsigmoid(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::logsigmoid(x);
  }
};
/// torch's nn.Softplus (beta 1, threshold 20): adx::softplus of its argument.
struct softplus {
  /// softplus(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::softplus(x);
  }
};
/// torch's nn.SiLU: adx::silu of its argument.
struct silu {
  /// silu(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::silu(x);
  }
};
/// torch's nn.Mish: adx::mish of its argument.
struct mish {
  /// mish(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::mish(x);
  }
};
/// torch's nn.GELU: adx::gelu of its argument.
struct gelu {
  /// gelu(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::gelu(x);
  }
};
/// torch's nn.ReLU6: adx::relu6 of its argument.
struct relu6 {
  /// relu6(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::relu6(x);
  }
};
/// torch's nn.SELU: adx::selu of its argument.
struct selu {
  /// selu(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::selu(x);
  }
};

/// torch's nn.GELU(approximate='tanh'): adx::gelu_tanh of its argument.
struct gelu_tanh {
  /// gelu_tanh(x), for a tensor, an expression or a scalar
  template <class X>
  auto operator()(X const& x) const {
    return adx::gelu_tanh(x);
  }
};
/// torch's nn.LeakyReLU(negative_slope).
struct leaky_relu {
  double negative_slope = 0.01;  ///< the slope below 0
  /// adx::leaky_relu(x, negative_slope)
  template <class X>
  auto operator()(X const& x) const {
    return adx::leaky_relu(x, negative_slope);
  }
};
/// torch's nn.ELU(alpha).
struct elu {
  double alpha = 1.0;  ///< the scale of e^x - 1 below 0
  /// adx::elu(x, alpha)
  template <class X>
  auto operator()(X const& x) const {
    return adx::elu(x, alpha);
  }
};
/// torch's nn.Hardtanh(min_val, max_val).
struct hardtanh {
  double min_val = -1.0;  ///< the lower bound
  double max_val = 1.0;   ///< the upper bound
  /// adx::hardtanh(x, min_val, max_val)
  template <class X>
  auto operator()(X const& x) const {
    return adx::hardtanh(x, min_val, max_val);
  }
};
/// torch's nn.Flatten(start_dim): the axes from start_axis on merged into one ([N, C, H, W] to
/// [N, C H W] by default), the tensor evaluated first if it is an expression.
struct flatten {
  long start_axis = 1;  ///< the first axis merged (negative counts from the end)
  /// x with its axes from start_axis on merged
  template <class X>
  auto operator()(X const& x) const {
    auto const t = eval(x);
    std::size_t const from = detail::normalize_axis("flatten", start_axis, t.shape());
    shape out;
    std::size_t rest = 1;
    for (std::size_t d = 0; d < t.rank(); ++d) {
      if (d < from)
        out.push_back(t.shape()[d]);
      else
        rest *= t.shape()[d];
    }
    out.push_back(rest);
    return t.reshape(out);
  }
};
/// softmax along an axis (torch's nn.Softmax(dim)).
struct softmax {
  long axis = -1;  ///< the axis the probabilities sum to one along
  /// adx::softmax of x along axis
  template <class X>
  auto operator()(X const& x) const {
    return adx::softmax(x, axis);
  }
};
/// log_softmax along an axis (torch's nn.LogSoftmax(dim)).
struct log_softmax {
  long axis = -1;  ///< the axis normalised along
  /// adx::log_softmax of x along axis
  template <class X>
  auto operator()(X const& x) const {
    return adx::log_softmax(x, axis);
  }
};
}  // namespace act

/// Modules applied one after another (torch.nn.Sequential): net(x) is m_n(...m_2(m_1(x))).
/// Each module is anything callable on the previous one's result; those with trainable_params()
/// contribute their parameters to the sequential's, in order.
template <class... M>
class sequential {
  static_assert(sizeof...(M) > 0, "adx: nn::sequential needs at least one module");

 public:
  /// The modules, in the order they apply.
  explicit sequential(M... modules) : modules_(std::move(modules)...) {}

  /// The modules applied to x in order.
  template <class X>
  auto operator()(X const& x) const {
    return apply<0>(x);
  }

  /// The parameters of every module that has them, in the modules' order (T: their element
  /// type, which all modules with parameters share).
  auto trainable_params() {
    using lists = boost::mp11::mp_transform<params_of, boost::mp11::mp_copy_if<boost::mp11::mp_list<M...>, has_params>>;
    static_assert(boost::mp11::mp_size<boost::mp11::mp_unique<lists>>::value <= 1,
                  "adx: nn::sequential: the modules' parameters have different element types (float and double?)");
    using list = boost::mp11::mp_eval_if_c<boost::mp11::mp_empty<lists>::value, parameter_list<double>,
                                           boost::mp11::mp_front, lists>;
    list out;
    std::apply([&](auto&... m) { (append(out, m), ...); }, modules_);
    return out;
  }

  /// Module I.
  template <std::size_t I>
  auto& get() noexcept {
    return std::get<I>(modules_);
  }
  /// Module I.
  template <std::size_t I>
  auto const& get() const noexcept {
    return std::get<I>(modules_);
  }
  /// The number of modules.
  static constexpr std::size_t size() noexcept { return sizeof...(M); }

 private:
  template <class X>
  using has_params = std::bool_constant<has_parameters<X>>;
  template <class X>
  using params_of = std::remove_cvref_t<decltype(std::declval<X&>().trainable_params())>;

  template <std::size_t I, class X>
  auto apply(X const& x) const {
    if constexpr (I + 1 == sizeof...(M))
      return std::get<I>(modules_)(x);
    else
      return apply<I + 1>(std::get<I>(modules_)(x));
  }
  template <class L, class X>
  static void append(L& out, X& m) {
    if constexpr (requires { m.trainable_params(); })
      static_assert(has_parameters<X>,
                    "adx: nn::sequential: a module's trainable_params() must return a parameter_list<T> (references "
                    "to the module's own parameters), or its parameters would not be trained");
    if constexpr (has_parameters<X>) {
      auto ps = m.trainable_params();
      out.insert(out.end(), ps.begin(), ps.end());
    }
  }

  std::tuple<M...> modules_;
};

}  // namespace nn
}  // namespace adx
