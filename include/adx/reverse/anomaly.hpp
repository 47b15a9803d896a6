// SPDX-License-Identifier: MIT
// adx: anomaly detection (torch.autograd.detect_anomaly). While a detect_anomaly scope is open
// on a thread, every statement recorded there remembers its operation and the source line that
// recorded it, and every backward sweep checks each contribution it adds: the first one that is
// not finite (NaN or infinite) stops the sweep with an anomaly_error naming the operation, its
// source line, the partial and the adjoint that produced it, and the input it was flowing into.
//
//   { adx::detect_anomaly on;  var<double> y = sqrt(x) * 2;  backward(y); }   // throws:
//   adx: anomaly: the backward sweep produced inf ... statement 2, mul(sqrt(x), c), recorded at f.cpp:12 ...
//
// Source lines come from source_location: a var's declaration or assignment from an
// expression (`var<double> y = ...;`, `y = ...;`), an independent variable's creation, a
// tensor's construction from an expression, matmul and the reductions. A compound assignment
// (`y += ...`) and statements adx records on its own behalf name their operation only.
// Outside a detect_anomaly scope nothing is recorded and the sweep is unchanged.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include "adx/core/source_location.hpp"

#include "adx/core/error.hpp"
#include "adx/core/expr.hpp"
#include "adx/reverse/modes.hpp"

namespace adx {

/// Where a statement came from: its operation ("mul(sqrt(x), c)": x an active operand, c a
/// constant) and the source line that recorded it (line 0 when not known).
struct statement_origin {
  char const* operation = nullptr;  ///< the operation's text, or null if recorded outside anomaly mode
  source_location where{};          ///< the line that recorded it
  /// Whether the operation is known (recorded in anomaly mode).
  bool known() const noexcept { return operation != nullptr; }
  /// Whether the source line is known.
  bool located() const noexcept { return where.line() != 0; }
};

/// A non-finite adjoint found by a sweep in anomaly mode.
class anomaly_error : public gradient_error {
 public:
  /// The message and the facts it states (as the accessors below give them).
  anomaly_error(std::string const& message, std::uint32_t statement, statement_origin origin, std::uint32_t input,
                statement_origin input_origin)
      : gradient_error(message), statement_(statement), origin_(origin), input_(input), input_origin_(input_origin) {}
  /// The statement (or the first output of the tensor operation) whose adjoint code produced it.
  std::uint32_t statement() const noexcept { return statement_; }
  /// statement()'s operation and line.
  statement_origin const& origin() const noexcept { return origin_; }
  /// The statement whose adjoint became non-finite (0 for a non-finite seed).
  std::uint32_t input() const noexcept { return input_; }
  /// input()'s operation and line.
  statement_origin const& input_origin() const noexcept { return input_origin_; }

 private:
  std::uint32_t statement_;
  statement_origin origin_;
  std::uint32_t input_;
  statement_origin input_origin_;
};

namespace detail {

/// The source line of the tensor-level call under way (set by tensor entry points in anomaly
/// mode, so that the tape nodes they record can name it).
inline source_location& anomaly_site() noexcept {
  thread_local source_location site{};
  return site;
}
/// Sets anomaly_site() for the duration of a tensor-level call (only in anomaly mode; the
/// outermost call wins, so a reduction inside softmax reports softmax's caller).
class anomaly_site_guard {
 public:
  explicit anomaly_site_guard(source_location where) noexcept {
    if (anomaly_mode() && anomaly_site().line() == 0) {
      anomaly_site() = where;
      set_ = true;
    }
  }
  anomaly_site_guard(anomaly_site_guard const&) = delete;
  anomaly_site_guard& operator=(anomaly_site_guard const&) = delete;
  ~anomaly_site_guard() {
    if (set_) anomaly_site() = source_location{};
  }

 private:
  bool set_ = false;
};

/// Whether an operand leaf holds constants: const_leaf, and the tensor layer's leaves over plain
/// numbers (tensor_leaf<double>, scalar_leaf<double>); an AD scalar is an active operand.
template <class X>
struct constant_leaf : is_const_leaf<X> {};
template <template <class> class L, class A>
requires(!ad_scalar<L<A>>) struct constant_leaf<L<A>> : std::bool_constant<std::is_arithmetic_v<A>> {
};

/// The text of an expression type ("mul(sqrt(x), c)"), written at compile time: a node is its
/// rule's name and its operands in brackets (the scalar expr<Rule, Ops...> and the tensor
/// expression nodes alike), an active leaf is `x` and a constant one `c`. Nothing of it is
/// code: a program has thousands of expression types, and a function per type to describe each
/// would be compiled for every one of them.
template <class X>
struct expression_text {
  static constexpr std::size_t length = 1;
  static constexpr char* write(char* out) {
    *out = constant_leaf<X>::value ? 'c' : 'x';
    return out + 1;
  }
};
template <template <class...> class N, class Rule, class... Ops>
requires requires { Rule::name; }
struct expression_text<N<Rule, Ops...>> {
  static constexpr std::size_t length =
      std::char_traits<char>::length(Rule::name) + 2 + (expression_text<Ops>::length + ...) + 2 * (sizeof...(Ops) - 1);
  static constexpr char* write(char* out) {
    for (char const* c = Rule::name; *c != 0; ++c) *out++ = *c;
    *out++ = '(';
    char* (*const operands[])(char*) = {&expression_text<Ops>::write...};
    for (std::size_t i = 0; i < sizeof...(Ops); ++i) {
      if (i > 0) *out++ = ',', *out++ = ' ';
      out = operands[i](out);
    }
    *out++ = ')';
    return out;
  }
};

/// A sum node (core/sum.hpp) reads as the binary nodes it stands for: a + b - c is
/// "sub(add(a, b), c)".
template <class Terms>
struct sum_text;
template <class T>
struct sum_text<sum_terms<no_terms, T, false>> : expression_text<T> {};
template <class Prev, class T, bool Neg>
struct sum_text<sum_terms<Prev, T, Neg>> {
  static constexpr std::size_t length = 4 + sum_text<Prev>::length + 2 + expression_text<T>::length + 1;
  static constexpr char* write(char* out) {
    for (char const* c = Neg ? "sub(" : "add("; *c != 0; ++c) *out++ = *c;
    out = sum_text<Prev>::write(out);
    *out++ = ',', *out++ = ' ';
    out = expression_text<T>::write(out);
    *out++ = ')';
    return out;
  }
};
template <class S, class Terms>
struct expression_text<sum_expr<S, Terms>> : sum_text<Terms> {};

template <class E>
inline constexpr auto expression_chars = [] {
  std::array<char, expression_text<E>::length + 1> text{};
  expression_text<E>::write(text.data());
  return text;
}();

/// The operation of expression type E as text (a string constant).
template <class E>
constexpr char const* describe_expression() noexcept {
  return expression_chars<E>.data();
}

/// An anomaly report: text written with snprintf into a fixed buffer and made a std::string
/// once. A handful of calls, where string concatenation would inline much code into every
/// program that sweeps a tape (the checks are compiled wherever a sweep is).
class anomaly_report {
 public:
  anomaly_report& text(char const* s) { return add("%s", s); }
  anomaly_report& count(std::size_t n) { return add("%zu", n); }
  /// A number as a stream prints it by default (six significant digits, "inf", "nan").
  template <class T>
  anomaly_report& number(T const& v) {
    auto const x = primal_of(v);
    if (x != x) return text("nan");  // whatever its sign bit
    if constexpr (std::is_same_v<std::remove_cv_t<decltype(x)>, long double>)
      return add("%Lg", x);
    else
      return add("%g", static_cast<double>(x));
  }
  /// "statement k, its operation, recorded at file:line in function".
  anomaly_report& origin(std::uint32_t statement, statement_origin const& o) {
    add("statement %u", static_cast<unsigned>(statement));
    if (!o.known()) return text(" (recorded outside anomaly mode)");
    add(", %s", o.operation);
    if (!o.located()) return text(" (no source line: a compound assignment or a statement adx recorded itself)");
    return add(", recorded at %s:%u in %s", o.where.file_name(), static_cast<unsigned>(o.where.line()),
               o.where.function_name());
  }
  std::string str() const { return std::string(text_.data(), size_); }

 private:
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  anomaly_report&
  add(char const* format, ...) {
    std::va_list args;
    va_start(args, format);
    int const n = std::vsnprintf(text_.data() + size_, text_.size() - size_, format, args);
    va_end(args);
    if (n > 0) size_ = std::min(text_.size() - 1, size_ + static_cast<std::size_t>(n));
    return *this;
  }
  std::array<char, 4096> text_{};
  std::size_t size_ = 0;
};

/// What a sweep in anomaly mode found not finite, as plain numbers and origins, so that the
/// report is the same code for every tape type.
struct anomaly_facts {
  enum class kind : std::uint8_t { seed, statement, node };
  kind what = kind::seed;
  std::uint32_t statement = 0;           ///< the statement, or the node's first output, that produced it (0: a seed)
  std::uint32_t input = 0;               ///< the statement whose adjoint is not finite
  statement_origin origin{};             ///< statement's
  statement_origin input_origin{};       ///< input's
  std::size_t operand = 0;               ///< kind::statement: the operand's position, from 0
  std::uint32_t outputs = 0;             ///< kind::node: its number of outputs
  long double value = 0;                 ///< the value that is not finite
  long double partial = 0, adjoint = 0;  ///< kind::statement: the partial and adjoint whose product it is
};

/// Writes the report of f and throws it as an anomaly_error.
[[noreturn]] inline void throw_anomaly(anomaly_facts const& f) {
  anomaly_report r;
  switch (f.what) {
    case anomaly_facts::kind::seed:
      r.text("adx: anomaly: the seed of the backward sweep is ").number(f.value).text(" at ");
      r.origin(f.input, f.input_origin);
      break;
    case anomaly_facts::kind::statement:
      r.text("adx: anomaly: the backward sweep produced ").number(f.value).text(" in the adjoint of ");
      r.origin(f.input, f.input_origin).text(", through ").origin(f.statement, f.origin);
      r.text(": its partial with respect to operand ").count(f.operand + 1).text(" is ").number(f.partial);
      r.text(" and its adjoint is ").number(f.adjoint);
      break;
    case anomaly_facts::kind::node:
      r.text("adx: anomaly: the backward sweep produced ").number(f.value).text(" in the adjoint of ");
      r.origin(f.input, f.input_origin).text(", through ").origin(f.statement, f.origin);
      r.text(" (a tensor operation on statements ").count(f.statement).text(" to ");
      r.count(std::size_t{f.statement} + f.outputs - 1).text(", whose adjoints were finite)");
      break;
  }
  throw anomaly_error(r.str(), f.statement, f.origin, f.input, f.input_origin);
}

/// throw_anomaly, reached through a pointer that detect_anomaly sets. A sweep looks for
/// anomalies only in anomaly mode, so a program that never opens a detect_anomaly scope
/// compiles none of the report's code (otherwise every program that sweeps a tape would).
inline std::atomic<void (*)(anomaly_facts const&)> anomaly_thrower{nullptr};
/// Throws the anomaly_error of f (from a sweep in anomaly mode).
[[noreturn]] inline void report_anomaly(anomaly_facts const& f) {
  if (auto const thrower = anomaly_thrower.load(std::memory_order_relaxed)) thrower(f);
  throw gradient_error("adx: internal: an anomaly was found outside anomaly mode");
}

}  // namespace detail

/// RAII: anomaly mode on the calling thread while it lives (scopes nest).
class detect_anomaly {
 public:
  detect_anomaly() noexcept {
    detail::anomaly_thrower.store(&detail::throw_anomaly, std::memory_order_relaxed);
    detail::recording_modes += detail::anomaly_unit;
  }
  detect_anomaly(detect_anomaly const&) = delete;
  detect_anomaly& operator=(detect_anomaly const&) = delete;
  ~detect_anomaly() { detail::recording_modes -= detail::anomaly_unit; }
};

}  // namespace adx
