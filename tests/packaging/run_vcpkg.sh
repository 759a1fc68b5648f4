#!/usr/bin/env bash
# Builds vcpkg-tool from its source tree, offline, and runs what of the port can be run without
# vcpkg's registry: `vcpkg format-manifest` must leave ports/sgmatch/vcpkg.json unchanged.
#   VCPKG_TOOL_SRC=/path/to/vcpkg-tool FMT_SRC=/path/to/fmt-12.1.0 CMAKERC_SRC=/path/to/cmrc-2.0.1 \
#     tests/packaging/run_vcpkg.sh
# (checkouts of microsoft/vcpkg-tool, fmtlib/fmt at the tag vcpkg-tool pins, vector-of-bool/cmrc at
# 2.0.1; needs Debian's libcurl4-openssl-dev, cmake and ninja-build). Not run by CI (CI's machine has
# none of these sources). Not covered yet: `vcpkg install` of the port, which needs the registry's
# scripts/, triplets/ and overlay ports for the dependencies.
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
mkdir -p "$work/root" && touch "$work/root/.vcpkg-root"
cp "$root/ports/sgmatch/vcpkg.json" "$work/vcpkg.json"
"$vcpkg" format-manifest "$work/vcpkg.json" --vcpkg-root="$work/root" > /dev/null
diff -u "$root/ports/sgmatch/vcpkg.json" "$work/vcpkg.json"
echo "== vcpkg: all passed"
