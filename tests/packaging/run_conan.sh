#!/usr/bin/env bash
# Runs the Conan recipe as users run it, offline: Conan 2 from its source tree (CONAN_SRC, a checkout
# of the conan-io/conan repository at a 2.x tag; run on Debian's python3 packages, no pip), a
# throw-away CONAN_HOME, Debian 12's packages as [platform_requires] (conan/profiles/debian12).
#   CONAN_SRC=/path/to/conan tests/packaging/run_conan.sh
# Checks, each a failure if it fails:
# 1. the README's command, `conan create` with the debian12 profile, without and with the onnx
#    part: the package builds (its dependency-check programs compile and link), test_package runs;
# 2. PkgConfigDeps writes one .pc file per part (sgmatch, sgmatch-onednn, sgmatch-reference,
#    sgmatch-onnx) and tests/consumer's programs build with plain g++ from them and run;
# 3. the xtensor range follows the profile's C++ standard: with local stand-in recipes for xtensor
#    0.25.0 and 0.26.0 (no remote is reachable here), a gnu17 profile resolves 0.25.0 and a C++20
#    one 0.26.0 (xtensor 0.26 needs C++20).
# Not run by CI (CI's machine has no Conan source); needs apt packages python3-requests
# python3-urllib3 python3-colorama python3-yaml python3-patch-ng python3-fasteners python3-distro
# python3-jinja2 python3-dateutil, and the Debian -dev packages the profile names.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
: "${CONAN_SRC:?set CONAN_SRC to a Conan 2 source checkout}"
work="$(mktemp -d /tmp/sgmatch-conan.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export CONAN_HOME="$work/home"
conan() { PYTHONPATH="$CONAN_SRC" /usr/bin/python3 -m conans.conan "$@"; }
debian=(--profile:host="$root/conan/profiles/debian12" --profile:build="$root/conan/profiles/debian12")
conan --version
conan profile detect > /dev/null 2>&1

for onnx in False True; do
  echo "== conan create (debian12 profile, with_onnx=$onnx)"
  # test_package builds in a copy: conan create writes its build folder beside the recipe.
  rm -rf "$work/src" && mkdir "$work/src"
  (cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$work/src")
  conan create "$work/src" "${debian[@]}" -o "sgmatch/*:with_onnx=$onnx" > "$work/create-$onnx.log" 2>&1 ||
    { tail -40 "$work/create-$onnx.log"; exit 1; }
  grep -q "sgmatch test_package: ok" "$work/create-$onnx.log"
done

echo "== PkgConfigDeps: a .pc file per part, used by plain g++"
conan install --requires="sgmatch/$(cat "$root/VERSION")" -o "sgmatch/*:with_onnx=True" -g PkgConfigDeps "${debian[@]}" \
  --output-folder="$work/pc" > "$work/pc.log" 2>&1 || { tail -20 "$work/pc.log"; exit 1; }
export PKG_CONFIG_PATH="$work/pc"
for part in onednn reference onnx; do
  g++ -std=c++17 -O0 "$root/tests/consumer/main_$part.cpp" $(pkg-config --cflags --libs "sgmatch-$part") -o "$work/pc_$part"
  "$work/pc_$part"
done

echo "== the xtensor range follows compiler.cppstd (stand-in xtensor 0.25.0 and 0.26.0)"
mkdir -p "$work/xtensor"
cat > "$work/xtensor/conanfile.py" <<'PY'
from conan import ConanFile
class Xtensor(ConanFile):
    name = "xtensor"
    package_type = "header-library"
PY
for v in 0.25.0 0.26.0; do conan export "$work/xtensor" --version "$v" > /dev/null 2>&1; done
cat > "$work/system" <<'PROFILE'
include(default)
[platform_requires]
boost/1.74.0
onednn/2.6.3
[options]
boost/*:header_only=True
PROFILE
for std in gnu17 20; do
  conan graph info "$root" -nr --profile:host="$work/system" --profile:build="$work/system" \
    -s compiler.cppstd=$std --format=json > "$work/graph-$std.json" 2> "$work/graph-$std.log" ||
    { tail -20 "$work/graph-$std.log"; exit 1; }
  picked=$(/usr/bin/python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['graph']['nodes']; print([n['ref'] for n in g.values() if n['ref'].startswith('xtensor/')][0].split('#')[0])" "$work/graph-$std.json")
  echo "cppstd $std: $picked"
  want=$([ $std = 20 ] && echo xtensor/0.26.0 || echo xtensor/0.25.0)
  [ "$picked" = "$want" ] || { echo "expected $want"; exit 1; }
done
echo "== conan: all passed"
