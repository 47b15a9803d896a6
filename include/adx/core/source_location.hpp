// SPDX-License-Identifier: MIT
// adx: where a call was written, for anomaly mode (reverse/anomaly.hpp). source_location
// would do, but libstdc++'s needs a compiler builtin that clang 14 lacks; the three builtins
// used here exist in g++ and clang alike, and as default arguments they name the caller.
#pragma once

namespace adx {

/// A file, function and line, taken where current() is called (as a default argument: the
/// caller's).
struct source_location {
  /// The calling place (as std::source_location::current()).
  static constexpr source_location current(char const* file = __builtin_FILE(),
                                           char const* function = __builtin_FUNCTION(),
                                           unsigned line = __builtin_LINE()) noexcept {
    return source_location{file, function, line};
  }
  /// The file ("" when not known).
  constexpr char const* file_name() const noexcept { return file_ ? file_ : ""; }
  /// The function ("" when not known).
  constexpr char const* function_name() const noexcept { return function_ ? function_ : ""; }
  /// 0 when not known.
  constexpr unsigned line() const noexcept { return line_; }

  char const* file_ = nullptr;      ///< the file, or null
  char const* function_ = nullptr;  ///< the function, or null
  unsigned line_ = 0;               ///< the line, or 0
};

}  // namespace adx
