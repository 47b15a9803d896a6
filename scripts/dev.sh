#!/usr/bin/env bash
# adx developer entry point. On a fresh Debian machine it installs what is missing, then:
#   scripts/dev.sh demo        build and run the demo (the seed examples)
#   scripts/dev.sh test        build and run the whole test suite: clang++ under AddressSanitizer +
#                              UndefinedBehaviorSanitizer, every source also checked by g++, and
#                              libFuzzer on random programs for ADX_FUZZ_SECONDS (default 30) (build-test)
#   scripts/dev.sh gcc         build and run the test suite with g++ -Og, no sanitizers (build-gcc)
#   scripts/dev.sh bench       build the scalar benchmarks and write benchmarks/results/scalar.*
#   scripts/dev.sh bench-tensor  build tensor_bench and write benchmarks/results/tensor.*
#                              (ADX_BENCH_TORCH=1 also installs LibTorch, libtorch-dev)
#   scripts/dev.sh bench-train   build train_bench (CNN gradients against LibTorch, an Adam step)
#                              and print its medians and ratios (ADX_BENCH_TORCH=1 as above)
#   scripts/dev.sh bench-linalg  build linalg_bench (gradients through adx::linalg against hand-written
#                              LAPACK adjoints, LibTorch and Eigen over var) and print its medians and
#                              ratios (ADX_BENCH_TORCH=1 as above)
#   scripts/dev.sh format      check the C++ sources' formatting with clang-format (changes nothing)
#   scripts/dev.sh bench-check build the benchmarks with every peer and run them once, briefly
#   scripts/dev.sh fuzz        build the libFuzzer target (clang++, ASan + UBSan, build-fuzz) and
#                              fuzz random programs for ADX_FUZZ_SECONDS (default 60)
#   scripts/dev.sh tsan        the thread tests under ThreadSanitizer (build-tsan)
#   scripts/dev.sh consumers   build and run the consumer projects (CMake install + find_package,
#                              add_subdirectory, FetchContent, Conan create); scripts/consumers.sh
# ADX_JOBS sets the build parallelism (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${ADX_JOBS:-$(nproc 2>/dev/null || echo 2)}
peers=(libadolc-dev libtrilinos-sacado-dev libeigen3-dev libceres-dev)
packages=(cmake make g++ libboost-dev libopenblas-dev liblapacke-dev libsleef-dev doctest-dev nlohmann-json3-dev libbenchmark-dev)

install_missing() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "adx: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    # Waits for the package lock (another apt or an unattended upgrade) instead of failing.
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
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
    configure_build build -DADX_BUILD_TESTS=OFF -DADX_BUILD_BENCHMARKS=OFF -DADX_BUILD_EXAMPLES=OFF
    ./build/src/adx_demo
    ;;
  test)
    # The suite, built once: clang++ with AddressSanitizer + UndefinedBehaviorSanitizer, -Werror,
    # and g++ reading every test source and public header with -fsyntax-only (ADX_CHECK_COMPILER),
    # so that both compilers must accept all of it; then ctest (the suite, the compile-fail cases
    # with both compilers, the demo's seed outputs) beside libFuzzer on random programs for
    # ADX_FUZZ_SECONDS (default 30; 0 skips it). One full build instead of a g++ one and a
    # sanitizer one: g++'s -fsyntax-only takes a third of its -Og build's time. `scripts/dev.sh
    # gcc` still builds and runs the suite with g++ -Og.
    # -O0: the nested test instantiations compile several times faster than at -O1 and in a
    # fraction of the memory; at -O0 adx forces nothing inline (ADX_FORCE_INLINE, config.hpp). Every UBSan check
    # but `function` (calls through a function pointer cast to another type, which adx never
    # makes): it emits type information for every function, which slows this build markedly.
    # -g1 (line tables): the reports' stack traces keep their files and lines, in less build time
    # than full debug information takes.
    # CMAKE_CXX_FLAGS_DEBUG is emptied: its -g comes after ours and would win.
    install_missing clang libclang-rt-14-dev libeigen3-dev
    cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= -DCMAKE_CXX_COMPILER=clang++ \
      -DADX_CHECK_COMPILER=g++ -DADX_BUILD_BENCHMARKS=OFF -DADX_INSTALL=OFF -DADX_BUILD_FUZZ=ON \
      "-DCMAKE_CXX_FLAGS=-O0 -g1 -fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all -fno-omit-frame-pointer" \
      >/dev/null
    cmake --build build-test -j "$jobs"
    # The fuzzer runs beside ctest: ctest's time is mostly the random scalar programs (two test
    # cases of ~30 s each under the sanitizers), which the fuzzer shares the cores with.
    fuzz_pid=""
    if [ "${ADX_FUZZ_SECONDS:-30}" != 0 ]; then
      mkdir -p build-test/corpus
      ./build-test/test/fuzz/adx_fuzz_programs -max_total_time="${ADX_FUZZ_SECONDS:-30}" -print_final_stats=1 \
        -artifact_prefix=build-test/ build-test/corpus >build-test/fuzz.log 2>&1 &
      fuzz_pid=$!
    fi
    # The last line is the verdict: ctest's counts (and the fuzzer's, when it found a failure).
    ctest_ok=1
    (cd build-test && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure \
      -j "$jobs") 2>&1 | tee build-test/ctest.log || ctest_ok=0
    verdict() {  # ctest's "N% tests passed, F tests failed out of T" as "adx: P passed, F failed"
      local counts
      counts=$(grep -oE '[0-9]+ tests failed out of [0-9]+' build-test/ctest.log | tail -1 || true)
      local failed=${counts%% *} total=${counts##* }
      echo "adx: $((${total:-0} - ${failed:-0})) passed, ${failed:-0} failed$1"
    }
    if [ "$ctest_ok" = 0 ]; then
      [ -z "$fuzz_pid" ] || kill "$fuzz_pid" 2>/dev/null || true
      verdict ""
      exit 1
    fi
    if [ -n "$fuzz_pid" ]; then
      if ! wait "$fuzz_pid"; then
        tail -60 build-test/fuzz.log
        verdict ", and the fuzzer found a failure (above)"
        exit 1
      fi
      grep -E "^Done|exec_per_sec" build-test/fuzz.log
    fi
    verdict ""
    ;;
  gcc)
    # The suite built with g++ and run, without sanitizers (not part of CI, whose test step builds
    # with clang++ and has g++ check the sources). -Og, not CMake's -O3 (test/CMakeLists.txt).
    install_missing
    cmake -S . -B build-gcc -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ -DADX_BUILD_BENCHMARKS=OFF >/dev/null
    cmake --build build-gcc -j "$jobs"
    (cd build-gcc && ctest --output-on-failure -j "$jobs")
    ;;
  bench)
    install_missing "${peers[@]}" python3 python3-matplotlib
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
    cmake --build build-bench -j "$jobs" --target scalar_bench
    cmake --build build-bench --target scalar_bench_report
    ;;
  bench-tensor)
    # LibTorch is optional and large (Debian libtorch-dev pulls ~150 packages): installed only
    # with ADX_BENCH_TORCH=1; tensor_bench uses it whenever CMake finds it (ADX_BENCH_TORCH=ON is
    # passed because bench-check shares build-bench and may have turned it off).
    install_missing python3 python3-matplotlib
    if [ "${ADX_BENCH_TORCH:-0}" = 1 ] && ! dpkg -s libtorch-dev >/dev/null 2>&1; then
      [ "$(id -u)" -eq 0 ] && s="" || s="sudo"
      DEBIAN_FRONTEND=noninteractive $s apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends libtorch-dev >/dev/null
    fi
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DADX_BENCH_TORCH=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
    cmake --build build-bench -j "$jobs" --target tensor_bench
    cmake --build build-bench --target tensor_bench_report
    ;;
  bench-train)
    # train_bench: convolutional networks' gradients against LibTorch (ADX_BENCH_TORCH=1 installs
    # it) and an Adam step against a hand-written loop; 7 interleaved repetitions, medians and
    # ratios (benchmarks/train_ratios.py)
    install_missing python3
    if [ "${ADX_BENCH_TORCH:-0}" = 1 ] && ! dpkg -s libtorch-dev >/dev/null 2>&1; then
      [ "$(id -u)" -eq 0 ] && s="" || s="sudo"
      DEBIAN_FRONTEND=noninteractive $s apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends libtorch-dev >/dev/null
    fi
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DADX_BENCH_TORCH=ON >/dev/null
    cmake --build build-bench -j "$jobs" --target train_bench
    # Twice: as the process starts (glibc returns large blocks to the system and faults fresh pages
    # in for the next ones, which LibTorch's allocations pay for), and with glibc's mmap and trim
    # thresholds raised, as in a long-running training process whose heap has grown.
    for run in default warm; do
      tunables=""
      [ "$run" = warm ] && tunables="glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"
      GLIBC_TUNABLES="$tunables" ./build-bench/benchmarks/train_bench --benchmark_repetitions=7 \
        --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true --benchmark_min_time=0.3 \
        --benchmark_format=json >"build-bench/train_$run.json"
      echo "== allocator: $run"
      python3 benchmarks/train_ratios.py "build-bench/train_$run.json"
    done
    ;;
  bench-linalg)
    # linalg_bench: the gradients of mvn, gp and solve_logdet at n = 8, 64, 256 by hand-written
    # LAPACKE adjoints, adx::linalg, LibTorch (ADX_BENCH_TORCH=1 installs it) and Eigen's LLT /
    # PartialPivLU over var scalars; 7 interleaved repetitions, medians and ratios to the hand
    # gradient against the targets (benchmarks/linalg_ratios.py), the table also in
    # build-bench/linalg.md
    install_missing python3 libeigen3-dev
    if [ "${ADX_BENCH_TORCH:-0}" = 1 ] && ! dpkg -s libtorch-dev >/dev/null 2>&1; then
      [ "$(id -u)" -eq 0 ] && s="" || s="sudo"
      DEBIAN_FRONTEND=noninteractive $s apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends libtorch-dev >/dev/null
    fi
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DADX_BENCH_TORCH=ON >/dev/null
    cmake --build build-bench -j "$jobs" --target linalg_bench
    ./build-bench/benchmarks/linalg_bench --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json >build-bench/linalg.json
    python3 benchmarks/linalg_ratios.py build-bench/linalg.json --md build-bench/linalg.md
    ;;
  format)
    install_missing clang-format
    format=$(command -v clang-format-14 || command -v clang-format)
    # every C++ source of ours (not the build folders Conan's test_package makes inside itself)
    mapfile -t sources < <(find include src test benchmarks examples test_package -name build -prune -o \
      \( -name '*.cpp' -o -name '*.hpp' \) -print | sort)
    "$format" --dry-run --Werror "${sources[@]}"
    # every header starts with the licence's SPDX identifier
    missing_spdx=$(find include -name '*.hpp' -exec sh -c 'head -1 "$1" | grep -qx "// SPDX-License-Identifier: MIT" || echo "$1"' _ {} \;)
    if [ -n "$missing_spdx" ]; then
      echo "adx: these headers lack '// SPDX-License-Identifier: MIT' on their first line:" >&2
      echo "$missing_spdx" >&2
      exit 1
    fi
    # no header over 600 lines (split it along its seams instead)
    long_headers=$(find include -name '*.hpp' -exec awk 'END { if (NR > 600) print FILENAME ": " NR " lines" }' {} \;)
    if [ -n "$long_headers" ]; then
      echo "adx: headers over 600 lines:" >&2
      echo "$long_headers" >&2
      exit 1
    fi
    # the layers (docs/development.md): a header includes only its own layer and those below
    layers=(core rules forward reverse tensor api nn)
    upward=""
    for ((i = 0; i < ${#layers[@]}; i++)); do
      for ((j = i + 1; j < ${#layers[@]}; j++)); do
        upward+=$(grep -Hn "#include \"adx/${layers[j]}/" include/adx/"${layers[i]}"/*.hpp || true)
      done
    done
    if [ -n "$upward" ]; then
      echo "adx: these includes go up the layers (${layers[*]}, lowest first):" >&2
      echo "$upward" >&2
      exit 1
    fi
    echo "adx: formatting, header sizes and layers ok for ${#sources[@]} files ($("$format" --version))"
    ;;
  bench-check)
    # the benchmarks must keep compiling and their start-up checks passing: build them with every
    # peer, then one short run (the timings mean nothing; scripts/dev.sh bench measures).
    # LibTorch only with ADX_BENCH_TORCH=1, as bench-tensor installs it: a machine set up from
    # the README has none, and where it is installed its benchmark file alone takes 34 s to build.
    install_missing "${peers[@]}"
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DADX_BUILD_TESTS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DADX_BENCH_TORCH="$([ "${ADX_BENCH_TORCH:-0}" = 1 ] && echo ON || echo OFF)" >/dev/null
    # both programs in one build, so that the two cores share all their files
    cmake --build build-bench -j "$jobs" --target scalar_bench tensor_bench gradient_loop train_bench linalg_bench
    if ! ./build-bench/benchmarks/scalar_bench --benchmark_min_time=0.01 >build-bench/scalar_bench_check.txt 2>&1; then
      cat build-bench/scalar_bench_check.txt
      exit 1
    fi
    if ! ./build-bench/benchmarks/gradient_loop --benchmark_min_time=0.01 >build-bench/gradient_loop_check.txt 2>&1; then
      cat build-bench/gradient_loop_check.txt
      exit 1
    fi
    echo "adx: scalar_bench built and ran every benchmark once briefly" \
      "($(grep -c ' ok$' build-bench/scalar_bench_check.txt) start-up checks ok; output in build-bench/scalar_bench_check.txt)"
    # the tensor suite: its start-up checks (every implementation against hand) and the small
    # sizes run once
    if ! OPENBLAS_NUM_THREADS=1 ./build-bench/benchmarks/tensor_bench --benchmark_filter='mlp_small|matmul_grad_32/' \
      >build-bench/tensor_bench_check.txt 2>&1; then
      cat build-bench/tensor_bench_check.txt
      exit 1
    fi
    echo "adx: tensor_bench built, checked and ran its small sizes once (build-bench/tensor_bench_check.txt)"
    if ! ./build-bench/benchmarks/train_bench --check_only >build-bench/train_bench_check.txt 2>&1; then
      cat build-bench/train_bench_check.txt
      exit 1
    fi
    echo "adx: train_bench built and its start-up checks passed (build-bench/train_bench_check.txt)"
    # linalg_bench: hand against central differences, every implementation against hand
    if ! ./build-bench/benchmarks/linalg_bench --check_only >build-bench/linalg_bench_check.txt 2>&1; then
      cat build-bench/linalg_bench_check.txt
      exit 1
    fi
    echo "adx: linalg_bench built and its start-up checks passed" \
      "($(grep -c ' ok$' build-bench/linalg_bench_check.txt) ok; build-bench/linalg_bench_check.txt)"
    ;;
  docs)
    # The API reference (docs/Doxyfile: the public headers' /// comments, adx::detail left out)
    # into build-docs/html. Reports how many public entities are undocumented; with
    # ADX_DOCS_STRICT=1 any doxygen warning fails the command.
    install_missing doxygen
    mkdir -p build-docs
    doxygen docs/Doxyfile
    undocumented=$(grep -c "is not documented" build-docs/warnings.txt || true)
    warnings=$(grep -c "warning:" build-docs/warnings.txt || true)
    echo "adx: reference in build-docs/html/index.html; $warnings doxygen warnings, $undocumented undocumented entities"
    if [ "${ADX_DOCS_STRICT:-0}" = 1 ] && [ "$warnings" != 0 ]; then
      exit 1
    fi
    ;;
  bench-compile)
    # The compile-time benchmark (benchmarks/compile): generated translation units timed with g++
    # and clang++, printed as seconds and ratios to an Eigen matrix product compiled in the same
    # run. One compile at a time; repetitions interleaved (ADX_COMPILE_REPS, default 3).
    install_missing clang libeigen3-dev python3
    python3 benchmarks/compile/run.py --reps "${ADX_COMPILE_REPS:-3}" --out build-compile --runtime
    ;;
  fuzz)
    # libFuzzer decodes its inputs into random scalar programs (test/fuzz/fuzz_programs.cpp) and
    # checks every mode against the others; the corpus is kept in build-fuzz/corpus, a failing
    # input is saved as build-fuzz/crash-*
    install_missing clang libclang-rt-14-dev
    cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DADX_BUILD_FUZZ=ON \
      -DADX_BUILD_TESTS=OFF -DADX_BUILD_BENCHMARKS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF -DADX_INSTALL=OFF \
      "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g" >/dev/null
    cmake --build build-fuzz -j "$jobs" --target adx_fuzz_programs
    mkdir -p build-fuzz/corpus
    ./build-fuzz/test/fuzz/adx_fuzz_programs -max_total_time="${ADX_FUZZ_SECONDS:-60}" -print_final_stats=1 \
      -artifact_prefix=build-fuzz/ build-fuzz/corpus
    ;;
  tsan)
    # the thread tests (their own executable, adx_thread_tests) under ThreadSanitizer. OpenBLAS
    # keeps to the calling thread: its own threads are not instrumented. -O0: the same races are
    # reported (every access is instrumented), the tests take twice as long, and the build 40 %
    # less. -g1: line tables are all the reports need (CMAKE_CXX_FLAGS_DEBUG is emptied: its -g
    # would come after). clang++: it compiles with ThreadSanitizer faster than g++.
    install_missing clang libclang-rt-14-dev
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= -DCMAKE_CXX_COMPILER=clang++ \
      -DADX_BUILD_BENCHMARKS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF \
      -DADX_INSTALL=OFF "-DCMAKE_CXX_FLAGS=-O0 -g1 -fsanitize=thread -fno-omit-frame-pointer" >/dev/null
    cmake --build build-tsan -j "$jobs" --target adx_thread_tests
    (cd build-tsan && OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
      ctest --output-on-failure -R threads)
    ;;
  consumers)
    install_missing python3 python3-venv
    scripts/consumers.sh "${@:2}"
    ;;
  *)
    echo "usage: scripts/dev.sh demo|test|gcc|bench|bench-tensor|bench-train|bench-linalg|bench-compile|docs|format|bench-check|fuzz|tsan|consumers" >&2
    exit 2
    ;;
esac
