// SPDX-License-Identifier: MIT
// adx: the per-thread switches of recording, no_grad (reverse/var.hpp) and anomaly mode
// (reverse/anomaly.hpp). Both live in one word, so that recording a statement, the hot path,
// tests them with one load: the word is zero unless a no_grad or detect_anomaly scope is open.
#pragma once

#include <cstdint>

#include "adx/config.hpp"

namespace adx::detail {

/// Low half: the number of open no_grad scopes (an enable_grad zeroes it for its lifetime);
/// high half: the number of open detect_anomaly scopes.
inline constinit thread_local std::uint64_t recording_modes = 0;
inline constexpr std::uint64_t no_grad_mask = 0xffff'ffffu;
inline constexpr std::uint64_t anomaly_unit = std::uint64_t{1} << 32;

/// True when no switch is set on this thread (the common case).
ADX_ALWAYS_INLINE bool plain_recording() noexcept { return recording_modes == 0; }
/// True unless a no_grad scope is open on this thread.
ADX_ALWAYS_INLINE bool grad_enabled() noexcept { return (recording_modes & no_grad_mask) == 0; }
/// Whether the calling thread is in anomaly mode.
ADX_ALWAYS_INLINE bool anomaly_mode() noexcept { return recording_modes >= anomaly_unit; }

}  // namespace adx::detail
