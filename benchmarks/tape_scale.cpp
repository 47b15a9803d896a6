// Tape scale: how memory grows with a long recording, and that it stays flat over many short
// ones. Not a Google Benchmark and not run in CI (it needs several GB); build the tape_scale
// target and run
//
//   tape_scale [statements (default 1e8)] [gradients (default 1e6)]
//
// Part 1 records `statements` statements y = y * a + sin(x) (one statement, three operands
// each) on one tape<double>, printing the resident memory as it grows, sweeps it once and
// checks dy/dx and dy/da against their closed forms. Part 2 computes `gradients` small
// gradients, each in its own tape_scope (scalar, nested var<var>, tensor), and prints the
// resident memory at the start and at the end of each loop.
#include <adx/adx.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

/// A field of /proc/self/status in MiB (VmRSS: resident now, VmHWM: the peak so far).
double status_mib(char const* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::string const key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0) return std::strtod(line.c_str() + key.size(), nullptr) / 1024.0;
  return -1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int long_recording(std::size_t n) {
  using adx::var;
  std::printf("== one recording of %zu statements y = y * a + sin(x)\n", n);
  double const rss0 = status_mib("VmRSS");
  std::printf("%14s %12s %14s\n", "statements", "RSS MiB", "B/statement");
  adx::tape_scope<var<double>> scope;
  auto& tp = adx::tape<double>::current();
  double const x0 = 0.5, a0 = 0.999999;
  var<double> x = x0, a = a0, y = 1.0;
  auto const t0 = std::chrono::steady_clock::now();
  std::size_t const report_every = n / 10 ? n / 10 : 1;
  for (std::size_t i = 3; i < n; ++i) {
    y = y * a + sin(x);
    if ((i + 1) % report_every == 0) {
      double const rss = status_mib("VmRSS");
      std::printf("%14zu %12.1f %14.2f\n", i + 1, rss, (rss - rss0) * 1048576.0 / static_cast<double>(i + 1));
    }
  }
  double const t_record = seconds_since(t0);
  adx::tape_stats const st = tp.stats();
  double const rss_recorded = status_mib("VmRSS");
  auto const t1 = std::chrono::steady_clock::now();
  adx::backward(y);
  double const t_sweep = seconds_since(t1);
  double const rss_swept = status_mib("VmRSS");
  // y_n = a^n y_0 + sin(x) (1 - a^n) / (1 - a) for n = statements - 3 steps
  double const steps = static_cast<double>(n - 3), an = std::pow(a0, steps);
  double const dx_want = std::cos(x0) * (1 - an) / (1 - a0);
  double const da_want =
      steps * std::pow(a0, steps - 1) * 1.0 +
      std::sin(x0) * (-(steps * std::pow(a0, steps - 1)) * (1 - a0) + (1 - an)) / ((1 - a0) * (1 - a0));
  double const dx = x.adjoint(), da = a.adjoint();
  std::size_t const statements = tp.size();
  std::printf("statements on the tape      %zu (%zu operands)\n", statements, st.operands);
  std::printf("tape bytes used / reserved  %.1f / %.1f MiB: %.2f / %.2f B per statement\n",
              static_cast<double>(st.bytes_used) / 1048576.0, static_cast<double>(st.bytes_reserved) / 1048576.0,
              static_cast<double>(st.bytes_used) / static_cast<double>(statements),
              static_cast<double>(st.bytes_reserved) / static_cast<double>(statements));
  std::printf("adjoints                    %.1f MiB: %.2f B per statement\n",
              static_cast<double>(tp.stats().adjoint_bytes) / 1048576.0,
              static_cast<double>(tp.stats().adjoint_bytes) / static_cast<double>(statements));
  std::printf("RSS growth recorded / swept %.1f / %.1f MiB: %.2f / %.2f B per statement\n", rss_recorded - rss0,
              rss_swept - rss0, (rss_recorded - rss0) * 1048576.0 / static_cast<double>(statements),
              (rss_swept - rss0) * 1048576.0 / static_cast<double>(statements));
  std::printf("peak RSS (VmHWM)            %.1f MiB\n", status_mib("VmHWM"));
  std::printf("time record / sweep         %.2f s / %.2f s (%.1f / %.1f ns per statement)\n", t_record, t_sweep,
              1e9 * t_record / static_cast<double>(statements), 1e9 * t_sweep / static_cast<double>(statements));
  bool const ok =
      std::abs(dx - dx_want) <= 1e-6 * std::abs(dx_want) && std::abs(da - da_want) <= 1e-6 * std::abs(da_want);
  std::printf("dy/dx = %.12g (closed form %.12g), dy/da = %.12g (closed form %.12g): %s\n", dx, dx_want, da, da_want,
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

template <class F>
int flat_loop(char const* what, std::size_t n, F const& one) {
  double sum = 0;
  for (std::size_t i = 0; i < 1000; ++i) sum += one(i);  // warm up: the tape's first chunk, the adjoints
  double const rss0 = status_mib("VmRSS");
  auto const t0 = std::chrono::steady_clock::now();
  double rss_half = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += one(i);
    if (i == n / 2) rss_half = status_mib("VmRSS");
  }
  double const t = seconds_since(t0), rss1 = status_mib("VmRSS");
  std::printf("%-34s %9zu gradients in %6.2f s: RSS %.1f -> %.1f -> %.1f MiB (checksum %.6g)\n", what, n, t, rss0,
              rss_half, rss1, sum);
  return rss1 - rss0 < 1.0 ? 0 : 1;  // flat: less than 1 MiB of growth
}

int many_small_gradients(std::size_t n) {
  using adx::tensor, adx::var;
  std::printf("== %zu small gradients, each in its own tape_scope\n", n);
  int bad = 0;
  bad += flat_loop("var<double>, 3 inputs", n, [](std::size_t i) {
    adx::tape_scope<var<double>> scope;
    var<double> x = 0.1 + 1e-7 * static_cast<double>(i), y = 0.7, z = -0.3;
    var<double> f = x * y * exp(z) + sin(x * z) / (1 + y * y);
    adx::backward(f);
    return x.adjoint() + y.adjoint() + z.adjoint();
  });
  bad += flat_loop("var<var<double>>, second derivative", n, [](std::size_t i) {
    adx::tape_scope<var<var<double>>> scope;
    var<var<double>> x = 0.4 + 1e-7 * static_cast<double>(i);
    var<var<double>> f = exp(sin(x)) * x;
    adx::backward(f);
    var<double> g = x.adjoint();
    adx::backward(g);
    return adx::primal(g) + x.value().adjoint();
  });
  bad += flat_loop("tensor<var<double>> 4x3, matmul", n / 10, [](std::size_t i) {
    adx::tape_scope<var<double>> scope;
    tensor<var<double>> w(tensor<double>{{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}, {0.7, 0.8, 0.9}, {1.0, 1.1, 1.2}});
    tensor<double> const xin{{1.0, -1.0, 0.5 + 1e-7 * static_cast<double>(i), 2.0}};
    var<double> l = logsumexp(tanh(adx::matmul(xin, w)));
    adx::backward(l);
    return adx::adjoints(w)[0];
  });
  std::printf("peak RSS (VmHWM)            %.1f MiB\n", status_mib("VmHWM"));
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t const statements = argc > 1 ? static_cast<std::size_t>(std::strtod(argv[1], nullptr)) : 100000000;
  std::size_t const gradients = argc > 2 ? static_cast<std::size_t>(std::strtod(argv[2], nullptr)) : 1000000;
  int bad = 0;
  if (gradients > 0) bad += many_small_gradients(gradients);
  if (statements > 3) bad += long_recording(statements);
  return bad;
}
