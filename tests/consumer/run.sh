#!/usr/bin/env bash
# Install sgmatch into a temporary prefix, then build and run tests/consumer: find_package with
# core only, find_package with onednn, a plain g++ line with pkg-config; and once more from the
# source tree through FetchContent.
# usage: tests/consumer/run.sh [build-dir-of-a-configured-sgmatch]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/sgmatch-consumer.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

echo "== install sgmatch into $prefix"
cmake -S "$root" -B "$work/sgmatch" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSGMATCH_BUILD_TESTS=OFF -DSGMATCH_BUILD_EXAMPLES=OFF -DSGMATCH_BUILD_BENCHMARKS=OFF \
  -DSGMATCH_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/configure.log"
cmake --build "$work/sgmatch" > /dev/null
cmake --install "$work/sgmatch" > "$work/install.log"
test -f "$prefix/include/sgmatch/sgmatch.hpp"

for comps in "" "core;onednn" "core;onednn;reference"; do
  name="${comps:-default}"
  name="${name//;/-}"
  echo "== find_package(sgmatch) with COMPONENTS '${comps}'"
  cmake -S "$root/tests/consumer" -B "$work/consumer-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" "-DSGMATCH_CONSUMER_COMPONENTS=${comps}" > /dev/null
  cmake --build "$work/consumer-$name" > /dev/null
  ctest --test-dir "$work/consumer-$name" --output-on-failure
done

echo "== from source through FetchContent (add_subdirectory underneath)"
cmake -S "$root/tests/consumer" -B "$work/consumer-fetch" -G Ninja -DCMAKE_BUILD_TYPE=Release \
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
g++ -std=c++17 -O1 "$root/tests/consumer/main.cpp" $(pkg-config --cflags --libs sgmatch) -o "$work/pc_core"
"$work/pc_core"
g++ -std=c++17 -O1 "$root/tests/consumer/main_onednn.cpp" $(pkg-config --cflags --libs sgmatch-onednn) -o "$work/pc_onednn"
"$work/pc_onednn"
echo "== consumers: all passed"
