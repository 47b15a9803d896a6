#!/usr/bin/env bash
# adx developer entry point. On a fresh Debian machine it installs what is missing, then:
#   scripts/dev.sh demo        build and run the demo (the seed examples)
#   scripts/dev.sh test        build and run the whole test suite (Release, g++)
#   scripts/dev.sh sanitize    the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/dev.sh bench       build the scalar benchmarks and write benchmarks/results/scalar.*
#   scripts/dev.sh bench-tensor  build tensor_bench and write benchmarks/results/tensor.*
#                              (ADX_BENCH_TORCH=1 also installs LibTorch, libtorch-dev)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
packages=(cmake make g++ libboost-dev libopenblas-dev doctest-dev nlohmann-json3-dev libbenchmark-dev)

install_missing() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "adx: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

configure_build() {  # dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

case "${1:-}" in
  demo)
    install_missing
    configure_build build -DADX_BUILD_TESTS=OFF -DADX_BUILD_BENCHMARKS=OFF
    ./build/src/adx_demo
    ;;
  test)
    install_missing
    configure_build build -DADX_BUILD_BENCHMARKS=OFF
    (cd build && ctest --output-on-failure -j "$jobs")
    ;;
  sanitize)
    install_missing
    # -O1: the heavily nested test instantiations compile several times faster than at -O2
    configure_build build-asan -DADX_BUILD_BENCHMARKS=OFF -DADX_BUILD_DEMO=OFF -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS=-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs" -E compile_fail)
    ;;
  bench)
    install_missing libadolc-dev libtrilinos-sacado-dev libeigen3-dev libceres-dev python3 python3-matplotlib
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
    cmake --build build-bench -j "$jobs" --target scalar_bench
    cmake --build build-bench --target scalar_bench_report
    ;;
  bench-tensor)
    # LibTorch is optional and large (Debian libtorch-dev pulls ~150 packages): installed only
    # with ADX_BENCH_TORCH=1; tensor_bench uses it whenever CMake finds it.
    install_missing python3 python3-matplotlib
    if [ "${ADX_BENCH_TORCH:-0}" = 1 ] && ! dpkg -s libtorch-dev >/dev/null 2>&1; then
      [ "$(id -u)" -eq 0 ] && s="" || s="sudo"
      DEBIAN_FRONTEND=noninteractive $s apt-get install -y -qq --no-install-recommends libtorch-dev >/dev/null
    fi
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
    cmake --build build-bench -j "$jobs" --target tensor_bench
    cmake --build build-bench --target tensor_bench_report
    ;;
  *)
    echo "usage: scripts/dev.sh demo|test|sanitize|bench|bench-tensor" >&2
    exit 2
    ;;
esac
