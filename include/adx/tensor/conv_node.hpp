// SPDX-License-Identifier: MIT
// adx: the 2-D convolution's kernels and its tape node. Group by group, the input's windows are
// laid out as a [channels * kh * kw, samples * oh * ow] matrix (im2col) for a chunk of samples
// and multiplied by the group's weight, [out, channels * kh * kw]: one GEMM per chunk at
// tensor/gemm.hpp's dispatch point (BLAS for float and double, the portable kernel for other
// element types). A chunk holds as many samples as keep its window matrix within 2^19 entries
// (4 MiB of doubles), so that a small layer makes a few large products instead of one small
// product per sample, and a large one takes no more memory than that.
//
// Over var<T> elements a convolution is one tape node (conv2d_node) that keeps the input's,
// weight's and bias's values and where their adjoints go (matmul_side, as a product's node
// does). Its backward pass rebuilds each chunk's window matrix and runs two GEMMs per chunk and
// group: dW += dY cols^T, and dcols = W^T dY, whose entries are added back to the input
// elements they were read from (col2im); db sums dY over the samples and positions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "adx/reverse/tape.hpp"
#include "adx/tensor/access.hpp"
#include "adx/tensor/gemm.hpp"
#include "adx/tensor/linalg.hpp"
#include "adx/tensor/shape.hpp"

namespace adx::detail {

/// The geometry of a convolution or pooling window over the spatial axes of an [N, C, H, W]
/// input: kh x kw taps, stride, padding and dilation per axis, and the output's oh x ow.
struct window_geometry {
  std::size_t n, c, h, w, kh, kw, oh, ow;
  std::size_t stride[2], padding[2], dilation[2];

  /// The input position of tap (i, j) of output position (y, x) along each axis, or -1 in the
  /// padding.
  long row(std::size_t y, std::size_t i) const {
    long const r = static_cast<long>(y * stride[0] + i * dilation[0]) - static_cast<long>(padding[0]);
    return r >= 0 && r < static_cast<long>(h) ? r : -1;
  }
  long col(std::size_t x, std::size_t j) const {
    long const q = static_cast<long>(x * stride[1] + j * dilation[1]) - static_cast<long>(padding[1]);
    return q >= 0 && q < static_cast<long>(w) ? q : -1;
  }
};

/// The output columns x of a window row whose tap j reads inside the input, [first, last), and
/// the input column that x = 0 would read (x * stride + offset).
struct tap_columns {
  std::size_t first, last;
  long offset;
};
inline tap_columns columns_of(window_geometry const& g, std::size_t j) {
  long const off = static_cast<long>(j * g.dilation[1]) - static_cast<long>(g.padding[1]);
  long const s = static_cast<long>(g.stride[1]), w = static_cast<long>(g.w);
  long const first = off >= 0 ? 0 : (-off + s - 1) / s;           // the first x with x s + off >= 0
  long const last = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1;  // one past the last with x s + off < w
  long const ow = static_cast<long>(g.ow), f = std::min(first, ow);
  return {static_cast<std::size_t>(f), static_cast<std::size_t>(std::clamp(last, f, ow)), off};
}

/// The window matrix of channels [c0, c0 + cn) of one sample (x: its C H W values): row
/// (channel, i, j), column (y, x), rows ld apart; zero in the padding.
template <class T>
void im2col(T const* x, window_geometry const& g, std::size_t c0, std::size_t cn, T* cols, std::size_t ld) {
  std::size_t const sw = g.stride[1];
  T const zero = constant<T>(0);
  for (std::size_t ch = 0; ch < cn; ++ch)
    for (std::size_t i = 0; i < g.kh; ++i)
      for (std::size_t j = 0; j < g.kw; ++j) {
        T* out = cols + ((ch * g.kh + i) * g.kw + j) * ld;
        T const* plane = x + (c0 + ch) * g.h * g.w;
        tap_columns const c = columns_of(g, j);
        for (std::size_t y = 0; y < g.oh; ++y, out += g.ow) {
          long const r = g.row(y, i);
          if (r < 0) {
            std::fill_n(out, g.ow, zero);
            continue;
          }
          T const* src = plane + static_cast<std::size_t>(r) * g.w;
          std::fill(out, out + c.first, zero);
          if (sw == 1)
            std::copy(src + (static_cast<long>(c.first) + c.offset), src + (static_cast<long>(c.last) + c.offset),
                      out + c.first);
          else
            for (std::size_t q = c.first; q < c.last; ++q) out[q] = src[static_cast<long>(q * sw) + c.offset];
          std::fill(out + c.last, out + g.ow, zero);
        }
      }
}

/// Adds a window matrix's entries back to the input elements they were read from (im2col's
/// adjoint): dx is one sample's C H W adjoints.
template <class T>
void col2im_add(T const* cols, window_geometry const& g, std::size_t c0, std::size_t cn, T* dx, std::size_t ld) {
  std::size_t const sw = g.stride[1];
  for (std::size_t ch = 0; ch < cn; ++ch)
    for (std::size_t i = 0; i < g.kh; ++i)
      for (std::size_t j = 0; j < g.kw; ++j) {
        T const* in = cols + ((ch * g.kh + i) * g.kw + j) * ld;
        T* plane = dx + (c0 + ch) * g.h * g.w;
        tap_columns const c = columns_of(g, j);
        for (std::size_t y = 0; y < g.oh; ++y, in += g.ow) {
          long const r = g.row(y, i);
          if (r < 0) continue;
          T* dst = plane + static_cast<std::size_t>(r) * g.w;
          for (std::size_t q = c.first; q < c.last; ++q) dst[static_cast<long>(q * sw) + c.offset] += in[q];
        }
      }
}

/// How a convolution's GEMMs take the samples: `per` samples at a time (as many as keep the
/// window matrix within 2^19 entries, at least one), so that small layers make few large
/// products rather than many small ones.
struct sample_chunks {
  std::size_t per;
  sample_chunks(std::size_t n, std::size_t taps, std::size_t positions)
      : per(std::clamp<std::size_t>((std::size_t{1} << 19) / std::max<std::size_t>(taps * positions, 1), 1,
                                    std::max<std::size_t>(n, 1))) {}
};

/// Copies the rows of group k of samples [s0, s0 + count) of y [N, OC, P] into m [og, count P]
/// (to_chunk), or back (!to_chunk, adding bias b if given).
template <class T>
void chunk_rows(T* y, T* m, std::size_t s0, std::size_t count, std::size_t oc, std::size_t k, std::size_t og,
                std::size_t positions, bool to_chunk, T const* b = nullptr) {
  std::size_t const ld = count * positions;
  for (std::size_t o = 0; o < og; ++o)
    for (std::size_t s = 0; s < count; ++s) {
      T* row = y + ((s0 + s) * oc + k * og + o) * positions;
      T* part = m + o * ld + s * positions;
      if (to_chunk)
        std::copy_n(row, positions, part);
      else if (b)
        for (std::size_t p = 0; p < positions; ++p) row[p] = part[p] + b[k * og + o];
      else
        std::copy_n(part, positions, row);
    }
}

/// The convolution's values: out [N, OC, OH, OW] from x [N, C, H, W], w [OC, C/groups, KH, KW]
/// and b [OC] (or null).
template <class T>
void conv2d_values(T const* x, T const* w, T const* b, window_geometry const& g, std::size_t oc, std::size_t groups,
                   T* out) {
  std::size_t const cg = g.c / groups, og = oc / groups, taps = cg * g.kh * g.kw, positions = g.oh * g.ow;
  sample_chunks const chunks(g.n, taps, positions);
  std::vector<T> cols(taps * positions * chunks.per), prod(og * positions * chunks.per);
  for (std::size_t s0 = 0; s0 < g.n; s0 += chunks.per) {
    std::size_t const count = std::min(chunks.per, g.n - s0), ld = count * positions;
    for (std::size_t k = 0; k < groups; ++k) {
      for (std::size_t s = 0; s < count; ++s)
        im2col(x + (s0 + s) * g.c * g.h * g.w, g, k * cg, cg, cols.data() + s * positions, ld);
      gemm<T>(false, false, og, ld, taps, w + k * og * taps, taps, cols.data(), ld, prod.data(), ld, false);
      chunk_rows(out, prod.data(), s0, count, oc, k, og, positions, false, b);
    }
  }
}

/// The tape node of a convolution over var<T> elements.
template <class T>
struct conv2d_node final : tape<T>::template node_with_inputs<conv2d_node<T>> {
  window_geometry g{};
  std::size_t oc = 0, groups = 1;
  matmul_side<T> x, w, b;  // b: empty without a bias

  void backward(T* adj) const override {
    T* dy = adj + this->first;  // read only (chunk_rows copies out of it)
    std::size_t const cg = g.c / groups, og = oc / groups, taps = cg * g.kh * g.kw, positions = g.oh * g.ow;
    T const* xv = std::as_const(x.values).data();
    T const* wv = std::as_const(w.values).data();
    sample_chunks const chunks(g.n, taps, positions);
    std::vector<T> cols(taps * positions * chunks.per), dyc(og * positions * chunks.per);
    // dW_k += dY_k cols_k^T, a chunk of samples at a time (add_adjoints: nothing for a constant)
    w.add_adjoints(adj, [&](T* dw, bool accumulate) {
      for (std::size_t s0 = 0; s0 < g.n; s0 += chunks.per) {
        std::size_t const count = std::min(chunks.per, g.n - s0), ld = count * positions;
        for (std::size_t k = 0; k < groups; ++k) {
          for (std::size_t s = 0; s < count; ++s)
            im2col(xv + (s0 + s) * g.c * g.h * g.w, g, k * cg, cg, cols.data() + s * positions, ld);
          chunk_rows(dy, dyc.data(), s0, count, oc, k, og, positions, true);
          gemm<T>(false, true, og, taps, ld, dyc.data(), ld, cols.data(), ld, dw + k * og * taps, taps,
                  accumulate || s0 > 0);
        }
      }
    });
    // dcols_k = W_k^T dY_k, added back to the input's elements
    x.add_adjoints(adj, [&](T* dx, bool accumulate) {
      if (!accumulate) std::fill_n(dx, x.values.size(), constant<T>(0));
      for (std::size_t s0 = 0; s0 < g.n; s0 += chunks.per) {
        std::size_t const count = std::min(chunks.per, g.n - s0), ld = count * positions;
        for (std::size_t k = 0; k < groups; ++k) {
          chunk_rows(dy, dyc.data(), s0, count, oc, k, og, positions, true);
          gemm<T>(true, false, taps, ld, og, wv + k * og * taps, taps, dyc.data(), ld, cols.data(), ld, false);
          for (std::size_t s = 0; s < count; ++s)
            col2im_add(cols.data() + s * positions, g, k * cg, cg, dx + (s0 + s) * g.c * g.h * g.w, ld);
        }
      }
    });
    b.add_adjoints(adj, [&](T* db, bool accumulate) {
      for (std::size_t o = 0; o < oc; ++o) {
        T sum = accumulate ? db[o] : constant<T>(0);
        for (std::size_t s = 0; s < g.n; ++s)
          for (std::size_t p = 0; p < positions; ++p) sum += dy[(s * oc + o) * positions + p];
        db[o] = sum;
      }
    });
  }
  template <class F>
  bool for_inputs(F&& f) const {
    return x.for_inputs(f) || w.for_inputs(f) || b.for_inputs(f);
  }
  /// The backward pass multiplies by the input's and the weight's values.
  bool nonfinite() const override {
    return any_nonfinite(x.values.data(), x.values.size()) || any_nonfinite(w.values.data(), w.values.size());
  }
  std::size_t bytes() const noexcept override { return x.bytes() + w.bytes() + b.bytes(); }
};

/// conv2d of x and w (and the bias b, if has_bias) into a tensor of S, the higher-level element
/// type of the two: one tape node over var elements, the kernels over the values otherwise.
template <class S, class SX, class SW, class SB>
tensor<S> conv2d_run(tensor<SX> const& x, tensor<SW> const& w, tensor<SB> const* b, window_geometry const& g,
                     std::size_t oc, std::size_t groups) {
  shape const out{g.n, oc, g.oh, g.ow};
  if constexpr (is_reverse_v<S>) {
    using T = value_type_t<S>;
    auto& tp = tape<T>::current();
    auto xs = product_side<S>(x);
    auto ws = product_side<S>(w);
    matmul_side<T> bs;
    if (b) bs = product_side<S>(*b);
    auto made = make_var_values<S>(out.size(), 0, tp.epoch());
    conv2d_values<T>(std::as_const(xs.values).data(), std::as_const(ws.values).data(),
                     b ? std::as_const(bs.values).data() : nullptr, g, oc, groups, made.second);
    if (!(xs.active || ws.active || bs.active) || out.size() == 0 || !grad_enabled())
      return tensor<S>::generate(out, [&](std::size_t i) { return S::constant(made.second[i]); });
    auto nd = tp.template make_node<conv2d_node<T>>();
    nd->g = g, nd->oc = oc, nd->groups = groups;
    nd->x = std::move(xs);
    nd->w = std::move(ws);
    nd->b = std::move(bs);
    made.first->first = tp.record_node(std::move(nd), out.size(), "conv2d");
    return tensor_access::from_block<S>(out, std::move(made.first));
  } else {
    tensor<S> const xv = as_elements<S>(x), wv = as_elements<S>(w);
    tensor<S> const bv = b ? as_elements<S>(*b) : tensor<S>(shape{0});
    tensor<S> r(out);
    conv2d_values<S>(xv.data(), wv.data(), b ? bv.data() : nullptr, g, oc, groups, r.data());
    return r;
  }
}

}  // namespace adx::detail
