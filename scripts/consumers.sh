#!/usr/bin/env bash
# Consumer checks: small projects that take adx in the ways the README describes, each building a
# program that computes real derivatives and exits nonzero when one is wrong
# (test/consumers/common/consumer.cpp; test_package/ for Conan).
#
#   scripts/consumers.sh [all|cmake|conan]      (default all)
#
#   cmake:  cmake --install to a temporary prefix (ADX_WITH_BLAS ON and OFF) + find_package;
#           the build tree as a package (adx_DIR); add_subdirectory (BLAS ON and OFF);
#           FetchContent from a file:// archive of this tree
#   conan:  conan create with conan/profiles/debian12 (Boost and OpenBLAS from Debian as
#           [platform_requires]), with_blas True and False, and with_sleef True (SLEEF from the
#           system), offline (--no-remote). Conan comes from PyPI into a venv kept in
#           ~/.cache/adx (ADX_CONAN_VENV overrides), with its own CONAN_HOME in the work folder.
#
# Expects the Debian packages scripts/dev.sh installs (scripts/dev.sh consumers runs this after
# installing them). Work folder: build-consumers/ (ADX_CONSUMERS_DIR overrides); logs in logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=${ADX_CONSUMERS_DIR:-$src/build-consumers}
conan_spec=${ADX_CONAN_SPEC:-conan==2.34.0}   # the Conan checked here; any 2.x from 2.0.17 works
what=${1:-all}
case "$what" in all | cmake | conan) ;; *) echo "usage: scripts/consumers.sh [all|cmake|conan]" >&2; exit 2 ;; esac

version=$(sed -n 's/^#define ADX_VERSION_STRING "\([0-9.]*\)"/\1/p' include/adx/config.hpp)
mkdir -p "$out/logs"
rm -rf "$out/results"
mkdir -p "$out/results"

check() {  # name, function and its arguments: runs it with its output in logs/<name>.log
  local name=$1
  shift
  local log=$out/logs/$name.log t0=$SECONDS rc
  # not inside `if`, so that set -e stops the check at its first failing command
  set +e
  (
    set -e
    "$@"
  ) >"$log" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    echo ok >"$out/results/$name"
    echo "consumer $name: ok ($((SECONDS - t0)) s)"
  else
    echo failed >"$out/results/$name"
    echo "consumer $name: FAILED ($((SECONDS - t0)) s); its log:"
    sed 's/^/    /' "$log"
  fi
}

configure_build_run() {  # consumer source dir, build dir, cmake args...
  local dir=$1 build=$2
  shift 2
  rm -rf "$build"
  cmake -S "$dir" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$build"
  "$build/consumer"
}

installed() {  # ON|OFF: install adx to a prefix, then find_package(adx <version> EXACT CONFIG)
  local blas=$1 build=$out/adx-blas-$1 prefix=$out/prefix-blas-$1
  rm -rf "$build" "$prefix"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DADX_WITH_BLAS="$blas" -DADX_INSTALL=ON \
    -DADX_BUILD_TESTS=OFF -DADX_BUILD_BENCHMARKS=OFF -DADX_BUILD_DEMO=OFF -DADX_BUILD_EXAMPLES=OFF
  cmake --install "$build" --prefix "$prefix"
  test -f "$prefix/include/adx/adx.hpp"
  test -f "$prefix/share/cmake/adx/adxConfigVersion.cmake"
  configure_build_run test/consumers/find_package "$out/find_package-blas-$blas" \
    -DCMAKE_PREFIX_PATH="$prefix" -DADX_EXPECT_VERSION="$version"
}

build_tree() {  # the build tree of installed ON as a package
  configure_build_run test/consumers/find_package "$out/find_package-build-tree" -Dadx_DIR="$out/adx-blas-ON" \
    -DADX_EXPECT_VERSION="$version"
}

subdirectory() {  # ON|OFF
  configure_build_run test/consumers/add_subdirectory "$out/add_subdirectory-blas-$1" -DADX_SOURCE_DIR="$src" \
    -DCONSUMER_BLAS="$1"
}

fetchcontent() {  # an archive of the tree (tracked and new files, as git sees them; no builds)
  local archive=$out/adx-src.tar.gz
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
      tar -czf "$archive" --null -T - --transform 's,^,adx/,'
  else
    tar -czf "$archive" --transform 's,^,adx/,' CMakeLists.txt cmake include
  fi
  configure_build_run test/consumers/fetchcontent "$out/fetchcontent" -DADX_URL="file://$archive"
}

conan_create() {  # with_blas True|False, with_sleef True|False
  # The venv is kept between runs in the user's cache (a pip install of Conan takes 10 s); its
  # CONAN_HOME, and so every package, is the work folder's, made afresh each run.
  local venv=${ADX_CONAN_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/adx/conan-venv-${conan_spec//[^A-Za-z0-9.]/_}}
  if ! "$venv/bin/conan" --version 2>/dev/null | grep -q .; then
    mkdir -p "$(dirname "$venv")"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "$conan_spec"
  fi
  export CONAN_HOME=$out/conan-home
  "$venv/bin/conan" --version
  "$venv/bin/conan" create . -pr:a conan/profiles/debian12 --no-remote -c tools.build:jobs=1 \
    -o "adx/*:with_blas=$1" -o "adx/*:with_sleef=$2"
}

# Two lanes at once (each check builds one small program on one core); within a lane the
# order matters: the build tree is the one `installed ON` configured, and the later Conan
# checks reuse the first one's venv.
cmake_lane1() {
  check find_package-blas-ON installed ON
  check find_package-build-tree build_tree
  check add_subdirectory-blas-ON subdirectory ON
  check fetchcontent fetchcontent
}
cmake_lane2() {
  check find_package-blas-OFF installed OFF
  check add_subdirectory-blas-OFF subdirectory OFF
}
conan_lane() {
  check conan-with_blas-True conan_create True False
  check conan-with_blas-False conan_create False False
  check conan-with_sleef-True conan_create True True
}
case "$what" in
  all)
    expected=9
    (cmake_lane1) &
    (conan_lane && cmake_lane2) &
    ;;
  cmake)
    expected=6
    (cmake_lane1) &
    (cmake_lane2) &
    ;;
  conan)
    expected=3
    (conan_lane) &
    ;;
esac
wait
passed=$(grep -lx ok "$out"/results/* 2>/dev/null | wc -l)
failed=$((expected - passed))
echo "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
