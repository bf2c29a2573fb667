#!/usr/bin/env bash
# A fresh build finds xxHash through pkg-config alone, as on Homebrew or a custom prefix:
# the header goes into a scratch prefix with its own libxxhash.pc, the system header is
# hidden for the duration (restored on exit), PKG_CONFIG_PATH names the scratch prefix (SwiftPM
# reads .pc files itself and looks there first), and
# SwiftPM compiles the core (its C target alone: no test build), and scripts/xxh3-in-use.c,
# linked with those objects, must find the system xxHash in use (not the built-in fallback)
# and its hashes equal to the built-in XXH3's.
# Needs root (it renames /usr/include/xxhash.h) and pkg-config. Run it alone: a build on the
# same machine while the header is hidden falls back to the built-in XXH3 (same hashes), and
# an incremental build keeps that object until hash.c is recompiled — `make test` catches it.
set -euo pipefail
cd "$(dirname "$0")/.."
system_header=/usr/include/xxhash.h
[ -f "$system_header" ] || { echo "check-pkgconfig: $system_header is not installed"; exit 1; }
command -v pkg-config >/dev/null || { echo "check-pkgconfig: pkg-config is not installed"; exit 1; }
CLANG=${SWIFT_CLANG:-$(dirname "$(readlink -f "$(command -v swift)")")/clang}
scratch=.build-pkgconfig
prefix=$(mktemp -d)
mkdir -p "$prefix/include/xxhash-scratch" "$prefix/lib/pkgconfig"
cp "$system_header" "$prefix/include/xxhash-scratch/xxhash.h"
cat >"$prefix/lib/pkgconfig/libxxhash.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include/xxhash-scratch
Name: libxxhash
Description: xxHash in a scratch prefix
Version: 0.8.1
Cflags: -I\${includedir}
PC
mv "$system_header" "$system_header.hidden-by-check"
trap 'mv "$system_header.hidden-by-check" "$system_header"; rm -rf "$prefix"' EXIT
echo "check-pkgconfig: pkg-config --cflags libxxhash: $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags libxxhash)"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" swift build --scratch-path "$scratch" --target CDiffCore
objects=("$scratch"/debug/CDiffCore.build/*.o)
"$CLANG" -std=c11 -ICDiffCore/include scripts/xxh3-in-use.c "${objects[@]}" -o "$scratch/xxh3-in-use"
in_use=$("$scratch/xxh3-in-use")
if [ "$in_use" != system ]; then
    echo "check-pkgconfig: the build found no xxHash through pkg-config (it uses the $in_use XXH3)"
    exit 1
fi
echo "check-pkgconfig: the build found the system xxHash through pkg-config; its hashes equal the built-in XXH3's"
