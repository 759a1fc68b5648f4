#!/usr/bin/env bash
# Install sgmatch into a temporary prefix and move it elsewhere, then build and run
# tests/consumer from the moved prefix: find_package with core only, with onednn, with onednn and
# reference, with onnx, with torch (the plugin built by the installed sgmatch_add_torch_plugin and
# loaded by Python), a second find_package adding components, a component the installation was built
# without, separate compilation (sgmatch_add_compiled from the installed sources), plain g++ lines
# with pkg-config (core, onednn, reference, onnx); once more from the source tree through
# FetchContent; and an installation built against an ONNX package that exports only ONNX >= 1.16's
# namespaced targets.
# usage: tests/consumer/run.sh [build-dir-of-a-configured-sgmatch]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/sgmatch-consumer.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

echo "== install sgmatch into $prefix"
# The dependency checks compile unoptimized: they check that each part finds, compiles against
# and links its dependencies (at -O3 the executor's check alone took three minutes of CI).
cmake -S "$root" -B "$work/sgmatch" -G Ninja -DCMAKE_BUILD_TYPE= \
  -DSGMATCH_BUILD_TESTS=OFF -DSGMATCH_BUILD_EXAMPLES=OFF -DSGMATCH_BUILD_BENCHMARKS=OFF \
  -DSGMATCH_INSTALL=ON -DSGMATCH_CHECK_DEPENDENCIES=ON -DSGMATCH_WITH_TORCH=ON -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/configure.log"
cmake --build "$work/sgmatch" > /dev/null  # the dependency checks, as a package build does
for check in core onednn reference onnx executor; do test -x "$work/sgmatch/sgmatch_check_$check"; done
cmake --install "$work/sgmatch" > "$work/install.log"
test -f "$prefix/include/sgmatch/sgmatch.hpp"

# Everything below uses the package from another place than the one it was installed to (a
# Conan cache moved, a copied tree): the CMake package and the .pc files are relocatable.
mv "$prefix" "$work/moved"
prefix="$work/moved"
if grep -rq "$work/prefix" "$prefix"; then
  echo "the installed package names its install prefix:"; grep -rl "$work/prefix" "$prefix"; exit 1
fi

# Consumers build unoptimized (no build type, -O0 with pkg-config): what they check is finding,
# linking and running, and the optimizer is most of the compile time of a TU that includes the
# oneDNN backend. Each is one or two translation units: two consumers build at a time.
consumer() {  # name, then extra cmake arguments
  local name="$1"; shift
  { cmake -S "$root/tests/consumer" -B "$work/consumer-$name" -G Ninja -DCMAKE_BUILD_TYPE= \
      -DCMAKE_PREFIX_PATH="$prefix" "$@" &&
    cmake --build "$work/consumer-$name" &&
    ctest --test-dir "$work/consumer-$name" --output-on-failure; } > "$work/consumer-$name.log" 2>&1
}
pending=()
finish() {  # wait for the pending consumers; print the log of any that failed, and fail
  local failed=0 job
  for job in "${pending[@]}"; do
    if wait "${job%%:*}"; then echo "== consumer ${job#*:}: passed"
    else echo "== consumer ${job#*:}: FAILED"; cat "$work/consumer-${job#*:}.log"; failed=1; fi
  done
  pending=()
  return $failed
}
for comps in "" "core;onednn" "core;onednn;reference" "onnx" "torch" second; do
  name="${comps:-default}"
  name="${name//;/-}"
  if [ "$comps" = second ]; then
    # a second find_package(sgmatch COMPONENTS onednn reference) adds to the first (core)
    consumer second -DSGMATCH_CONSUMER_SECOND=ON "-DSGMATCH_CONSUMER_COMPONENTS=onednn;reference" &
  else
    consumer "$name" "-DSGMATCH_CONSUMER_COMPONENTS=${comps}" &
  fi
  pending+=("$!:$name")
  if [ ${#pending[@]} -eq 2 ]; then finish; fi
done
finish

echo "== a component the installation was built without is refused by name, with its option"
cmake -S "$root" -B "$work/sgmatch-noref" -G Ninja -DSGMATCH_WITH_REFERENCE=OFF \
  -DSGMATCH_BUILD_TESTS=OFF -DSGMATCH_BUILD_EXAMPLES=OFF -DSGMATCH_BUILD_BENCHMARKS=OFF \
  -DSGMATCH_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$work/noref" > /dev/null
cmake --install "$work/sgmatch-noref" > /dev/null
if cmake -S "$root/tests/consumer" -B "$work/consumer-noref" -G Ninja -DCMAKE_PREFIX_PATH="$work/noref" \
     "-DSGMATCH_CONSUMER_COMPONENTS=core;reference" > "$work/noref.log" 2>&1; then
  echo "find_package(sgmatch COMPONENTS reference) succeeded on an installation without it"; exit 1
fi
grep -q "component 'reference' was asked for, but this installation" "$work/noref.log"
grep -q "SGMATCH_WITH_REFERENCE=OFF" "$work/noref.log"
test ! -f "$work/noref/lib/pkgconfig/sgmatch-reference.pc"

echo "== from source through FetchContent (add_subdirectory underneath)"
cmake -S "$root/tests/consumer" -B "$work/consumer-fetch" -G Ninja -DCMAKE_BUILD_TYPE= \
  -DSGMATCH_CONSUMER_SOURCE="$root" "-DSGMATCH_CONSUMER_COMPONENTS=core;onednn" > /dev/null
cmake --build "$work/consumer-fetch" > /dev/null
ctest --test-dir "$work/consumer-fetch" --output-on-failure

echo "== unknown component fails clearly"
if cmake -S "$root/tests/consumer" -B "$work/consumer-bad" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
     "-DSGMATCH_CONSUMER_COMPONENTS=core;nosuch" > "$work/bad.log" 2>&1; then
  echo "find_package(sgmatch COMPONENTS nosuch) succeeded"; exit 1
fi
grep -q "unknown component 'nosuch'" "$work/bad.log"

echo "== plain g++ with pkg-config"
pcdir="$(dirname "$(find "$prefix" -name sgmatch.pc | head -n1)")"
export PKG_CONFIG_PATH="$pcdir"
g++ -std=c++17 -O0 "$root/tests/consumer/main.cpp" $(pkg-config --cflags --libs sgmatch) -o "$work/pc_core"
"$work/pc_core"
g++ -std=c++17 -O0 "$root/tests/consumer/main_onednn.cpp" $(pkg-config --cflags --libs sgmatch-onednn) -o "$work/pc_onednn"
"$work/pc_onednn"
g++ -std=c++17 -O0 "$root/tests/consumer/main_reference.cpp" $(pkg-config --cflags --libs sgmatch-reference) -o "$work/pc_reference"
"$work/pc_reference"
g++ -std=c++17 -O0 "$root/tests/consumer/main_onnx.cpp" $(pkg-config --cflags --libs sgmatch-onnx) -o "$work/pc_onnx"
"$work/pc_onnx"

echo "== an ONNX package that exports only ONNX::onnx / ONNX::onnx_proto (ONNX >= 1.16), its libraries outside the linker's path"
# tests/consumer/onnx_namespaced/ stands for such a package, over copies of the system's libonnx
# in a directory of their own: the installed targets name the namespaced targets, the installed
# sgmatch-onnx.pc gives -L to that directory, and both consumers build and run.
mkdir -p "$work/onnxlib"
for lib in onnx onnx_proto; do
  cp -L "$(g++ -print-file-name=lib$lib.so)" "$work/onnxlib/lib$lib.so"
done
fake=(-DONNX_DIR="$root/tests/consumer/onnx_namespaced" -DONNX_FAKE_LIBDIR="$work/onnxlib")
cmake -S "$root" -B "$work/sgmatch-onnx116" -G Ninja -DSGMATCH_BUILD_TESTS=OFF -DSGMATCH_BUILD_EXAMPLES=OFF \
  -DSGMATCH_BUILD_BENCHMARKS=OFF -DSGMATCH_INSTALL=ON -DSGMATCH_WITH_TORCH=OFF -DCMAKE_INSTALL_PREFIX="$work/onnx116" \
  "${fake[@]}" > /dev/null
cmake --install "$work/sgmatch-onnx116" > /dev/null
targets="$(find "$work/onnx116" -name sgmatch-onnx-targets.cmake)"
grep -q "ONNX::onnx;ONNX::onnx_proto" "$targets"
if grep -Eq "[;\"]onnx(_proto)?[;\"]" "$targets"; then echo "plain onnx targets in $targets"; exit 1; fi
consumer onnx116 "-DSGMATCH_CONSUMER_COMPONENTS=onnx" -DCMAKE_PREFIX_PATH="$work/onnx116" "${fake[@]}" &
pending=("$!:onnx116")
finish
pc116="$(dirname "$(find "$work/onnx116" -name sgmatch-onnx.pc)")"
PKG_CONFIG_PATH="$pc116" pkg-config --libs sgmatch-onnx | grep -q -- "-L$work/onnxlib -lonnx -lonnx_proto"
g++ -std=c++17 -O0 "$root/tests/consumer/main_onnx.cpp" $(PKG_CONFIG_PATH="$pc116" pkg-config --cflags --libs sgmatch-onnx) \
  -o "$work/pc_onnx116"
"$work/pc_onnx116"
echo "== consumers: all passed"
