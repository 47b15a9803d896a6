// Times the gradient that the generated reverse_50 / reverse_100 units define (run.py
// --runtime): a compile-time change must not cost run time. Prints microseconds per gradient,
// the best of 15 rounds of 2000.
#include <array>
#include <chrono>
#include <cstdio>

std::array<double, 8> gradient(std::array<double, 8> const& at);

int main() {
  std::array<double, 8> at{0.3, 0.5, 0.7, 0.2, 0.4, 0.6, 0.8, 0.1};
  double sink = 0;
  for (int i = 0; i < 1000; ++i) sink += gradient(at)[0];
  double best = 1e300;
  for (int round = 0; round < 15; ++round) {
    auto const start = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; ++i) {
      at[0] += 1e-12;
      sink += gradient(at)[3];
    }
    std::chrono::duration<double, std::micro> const t = std::chrono::steady_clock::now() - start;
    if (t.count() / 2000 < best) best = t.count() / 2000;
  }
  std::printf("%.3f us per gradient (checksum %.6g)\n", best, sink);
}
