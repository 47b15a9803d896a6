// SPDX-License-Identifier: MIT
// adx: the exception types. Each names the operation and the arguments that were wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace adx {

/// Base of every exception adx throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A variable was used outside the recording that created it: after its recording was reset
/// or its scope ended, or on another thread's tape.
class stale_variable_error : public error {
 public:
  using error::error;
};

/// A gradient was asked of something the tape cannot give it for (bad seed, inactive output).
class gradient_error : public error {
 public:
  using error::error;
};

/// A bad argument to a gradient API (tf's ValueError, torch's RuntimeError for arguments).
class value_error : public error {
 public:
  using error::error;
};

/// A matrix a linalg function cannot factor: singular (solve, inv) or not positive definite
/// (cholesky), as torch.linalg.LinAlgError. The message names the function, the shape, the batch
/// element and the failing pivot or leading minor.
class linalg_error : public error {
 public:
  using error::error;
};

}  // namespace adx
