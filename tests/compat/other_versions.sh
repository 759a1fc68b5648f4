#!/usr/bin/env bash
# The oneDNN and reference parts against the dependency versions Debian 12 does not have, from
# their public sources (not run by CI: nothing beyond Debian's packages reaches the machine).
#
#   tests/compat/other_versions.sh ONEDNN_SRC XTENSOR_INCLUDE XTL_INCLUDE [ONEDNN_INSTALL]
#
# ONEDNN_SRC: a oneDNN 3.x source tree (its include/ and the version in its CMakeLists.txt; the headers CMake would
# generate are written here for a CPU-only OpenMP build). Every translation unit of the oneDNN
# tests and the demo is compiled against it, C++17 and C++20, -Werror.
# ONEDNN_INSTALL (optional): the install prefix of a oneDNN 3.x library built from that tree, e.g.
#   cmake -S ONEDNN_SRC -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=ONEDNN_INSTALL \
#     -DDNNL_BUILD_TESTS=OFF -DDNNL_BUILD_EXAMPLES=OFF -DONEDNN_BUILD_GRAPH=OFF -DDNNL_CPU_RUNTIME=OMP \
#     -DDNNL_GPU_RUNTIME=NONE -DDNNL_ENABLE_WORKLOAD=INFERENCE \
#     "-DDNNL_ENABLE_PRIMITIVE=BATCH_NORMALIZATION;BINARY;CONCAT;CONVOLUTION;DECONVOLUTION;ELTWISE;LAYER_NORMALIZATION;LRN;MATMUL;POOLING;REDUCTION;REORDER;SOFTMAX;SUM"
#   ninja -C b install      # about 40 minutes on 2 cores
# then every test and example of sgmatch is built against it (dnnl_DIR) and run.
# XTENSOR_INCLUDE, XTL_INCLUDE: xtensor >= 0.26 and xtl >= 0.8 include directories; the
# reference kernels' tests, the golden PyTorch outputs, the op kernels and the executor tests
# are built against them in C++20 (what xtensor 0.26 on needs) and run, with Debian's oneDNN.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 ONEDNN_SRC XTENSOR_INCLUDE XTL_INCLUDE [ONEDNN_INSTALL]" >&2; exit 2; }
onednn=$1 xtensor=$2 xtl=$3 installed=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$onednn/include" "$work/dnnl"
cfg="$work/dnnl/oneapi/dnnl"
sed -e 's/#cmakedefine DNNL_CPU_THREADING_RUNTIME .*/#define DNNL_CPU_THREADING_RUNTIME DNNL_RUNTIME_OMP/' \
    -e 's/#cmakedefine DNNL_CPU_RUNTIME .*/#define DNNL_CPU_RUNTIME DNNL_RUNTIME_OMP/' \
    -e 's/#cmakedefine DNNL_GPU_RUNTIME .*/#define DNNL_GPU_RUNTIME DNNL_RUNTIME_NONE/' \
    -e 's/#cmakedefine DNNL_GPU_VENDOR .*/#define DNNL_GPU_VENDOR DNNL_VENDOR_NONE/' \
    -e 's/#cmakedefine01 BUILD_INFERENCE/#define BUILD_INFERENCE 0/' \
    -e 's/#cmakedefine01 \([A-Z_0-9]*\)/#define \1 1/' \
    -e 's/#cmakedefine \(.*\)/\/* #undef \1 *\//' "$cfg/dnnl_config.h.in" > "$cfg/dnnl_config.h"
version=$(sed -n 's/^set(PROJECT_VERSION "\(.*\)")/\1/p' "$onednn/CMakeLists.txt")
[ -n "$version" ] || { echo "$onednn/CMakeLists.txt: no PROJECT_VERSION" >&2; exit 2; }
IFS=. read -r major minor patch <<< "$version"
sed -e "s/@DNNL_VERSION_MAJOR@/$major/; s/@DNNL_VERSION_MINOR@/$minor/; s/@DNNL_VERSION_PATCH@/$patch/" \
    "$cfg/dnnl_version.h.in" > "$cfg/dnnl_version.h"
[ -f "$cfg/dnnl_version_hash.h.in" ] && sed -e "s/@DNNL_VERSION_HASH@/\"$version\"/" "$cfg/dnnl_version_hash.h.in" > "$cfg/dnnl_version_hash.h"
echo "oneDNN $version: compiling the oneDNN part"
for std in 17 20; do
  for src in tests/onednn/fused_conv.cpp tests/onednn/lowering.cpp tests/onednn/op_kernels.cpp tests/onednn/layer_norm.cpp \
             tests/exec/executor.cpp examples/resnet50_demo.cpp; do
    g++ -std=c++$std -fsyntax-only -Wall -Wextra -Werror -DSGMATCH_GOLDEN_DIR='"x"' \
        -I"$work/dnnl" -Iinclude -Itests -Iexamples "$src"
    echo "  C++$std $src: compiles"
  done
done

echo "xtensor $xtensor, xtl $xtl: building and running the reference kernels' tests (C++20)"
g++ -std=c++20 -O1 -Wall -Wextra -Werror -DSGMATCH_GOLDEN_DIR="\"$PWD/tests/golden\"" -I"$xtensor" -I"$xtl" \
    -Iinclude -Itests -Iexamples tests/support/main.cpp tests/reference/kernels.cpp tests/onednn/golden.cpp \
    tests/onednn/op_kernels.cpp tests/exec/executor.cpp -o "$work/reference_tests" -ldnnl
"$work/reference_tests"

if [ -n "$installed" ]; then
  echo "oneDNN $version installed in $installed: every test and example built against it and run"
  cmake -S . -B "$work/with-onednn3" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DSGMATCH_WERROR=ON -DSGMATCH_BUILD_BENCHMARKS=OFF -DSGMATCH_HEADER_CHECK=OFF \
    -Ddnnl_DIR="$installed/lib/cmake/dnnl" > "$work/configure.log"
  cmake --build "$work/with-onednn3" -j2 > "$work/build.log"
  ldd "$work/with-onednn3/tests/test_onednn" | grep dnnl
  ctest --test-dir "$work/with-onednn3" -j2 --output-on-failure | tail -3
fi
