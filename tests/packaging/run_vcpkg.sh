#!/usr/bin/env bash
# Builds vcpkg-tool from its source tree and runs the port as a user runs it, offline:
#   VCPKG_TOOL_SRC=/path/to/vcpkg-tool FMT_SRC=/path/to/fmt-12.1.0 CMAKERC_SRC=/path/to/cmrc-2.0.1 \
#   VCPKG_REGISTRY=/path/to/vcpkg tests/packaging/run_vcpkg.sh
# (checkouts of microsoft/vcpkg-tool, fmtlib/fmt at the tag vcpkg-tool pins, vector-of-bool/cmrc at
# 2.0.1, microsoft/vcpkg for its scripts/, triplets/ and ports/vcpkg-cmake*; needs Debian's
# libcurl4-openssl-dev, patchelf, cmake, ninja-build and the -dev packages of the dependencies).
# Checks: `vcpkg format-manifest` leaves ports/sgmatch/vcpkg.json as it is; `vcpkg install
# sgmatch[core,onednn,reference]` from the overlay port passes, with Boost.Hana, oneDNN and xtensor
# as empty overlay ports standing for Debian's packages (vcpkg cannot download their sources here);
# the install has no second licence under share/doc, no torch part, a usage text naming only the
# installed parts; tests/consumer builds against it and passes. Not run by CI (CI's machine has none
# of these sources). Not covered: vcpkg building the dependencies itself (static oneDNN with
# OpenMP, protobuf 6, ONNX >= 1.16), the onnx feature.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
: "${VCPKG_TOOL_SRC:?}" "${FMT_SRC:?}" "${CMAKERC_SRC:?}"
work="$(mktemp -d /tmp/sgmatch-vcpkg.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "== build vcpkg-tool"
cmake -S "$VCPKG_TOOL_SRC" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DVCPKG_DEVELOPMENT_WARNINGS=OFF -DVCPKG_LIBCURL_DLSYM=OFF -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
  -DFETCHCONTENT_SOURCE_DIR_FMT="$FMT_SRC" -DFETCHCONTENT_SOURCE_DIR_CMAKERC="$CMAKERC_SRC" > "$work/configure.log"
ninja -C "$work/build" -j2 vcpkg > "$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
vcpkg="$work/build/vcpkg"
"$vcpkg" version | head -1
echo "== vcpkg format-manifest leaves ports/sgmatch/vcpkg.json as it is"
mkdir -p "$work/fmtroot" && touch "$work/fmtroot/.vcpkg-root"
cp "$root/ports/sgmatch/vcpkg.json" "$work/vcpkg.json"
"$vcpkg" format-manifest "$work/vcpkg.json" --vcpkg-root="$work/fmtroot" > /dev/null
diff -u "$root/ports/sgmatch/vcpkg.json" "$work/vcpkg.json"

echo "== vcpkg install sgmatch[core,onednn,reference] (the dependencies: Debian's, as empty overlay ports)"
: "${VCPKG_REGISTRY:?}"
mkdir -p "$work/root"
(cd "$VCPKG_REGISTRY" && git archive HEAD scripts triplets ports/vcpkg-cmake ports/vcpkg-cmake-config .vcpkg-root LICENSE.txt) | tar -x -C "$work/root"
for p in boost-hana:1.74.0 xtensor:0.24.3 onednn:2.6.3; do
  mkdir -p "$work/system/${p%%:*}"
  printf '{ "name": "%s", "version": "%s", "description": "Debian 12 package" }\n' "${p%%:*}" "${p#*:}" > "$work/system/${p%%:*}/vcpkg.json"
  echo 'set(VCPKG_POLICY_EMPTY_PACKAGE enabled)' > "$work/system/${p%%:*}/portfile.cmake"
done
VCPKG_FORCE_SYSTEM_BINARIES=1 "$vcpkg" install "sgmatch[core,onednn,reference]" --overlay-ports="$root/ports" \
  --overlay-ports="$work/system" --vcpkg-root="$work/root" --binarysource=clear --triplet=x64-linux \
  --x-install-root="$work/installed" --downloads-root="$work/downloads" --x-buildtrees-root="$work/buildtrees" \
  --x-packages-root="$work/packages" > "$work/install.log" 2>&1 || { tail -40 "$work/install.log"; exit 1; }
prefix="$work/installed/x64-linux"
test ! -e "$prefix/share/doc/sgmatch" || { echo "a second licence under share/doc"; exit 1; }
test ! -e "$prefix/share/sgmatch/sgmatch-torch-targets.cmake" || { echo "the torch part was installed"; exit 1; }
grep -q "COMPONENTS onednn reference" "$prefix/share/sgmatch/usage"
if grep -q "onnx" "$prefix/share/sgmatch/usage"; then echo "the usage names onnx, which is not installed"; exit 1; fi

echo "== tests/consumer against the installed package"
cmake -S "$root/tests/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_PREFIX_PATH="$prefix" \
  "-DSGMATCH_CONSUMER_COMPONENTS=core;onednn;reference" > "$work/consumer.log"
cmake --build "$work/consumer" > /dev/null
ctest --test-dir "$work/consumer" --output-on-failure
echo "== vcpkg: all passed"
