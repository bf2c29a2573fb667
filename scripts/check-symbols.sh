#!/usr/bin/env bash
# Every symbol the C core exports starts with dc_ (as swift-nio checks its vendored C):
# the core is compiled twice, with the system xxHash and with the built-in XXH3, and
# `nm` lists what each object defines globally.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG=${SWIFT_CLANG:-$(dirname "$(readlink -f "$(command -v swift)")")/clang}
OUT=.build-symbols
mkdir -p "$OUT"
status=0
for variant in system builtin; do
    flags=(-O2 -std=c11 -ICDiffCore/include)
    [ "$variant" = builtin ] && flags+=(-DDC_BUILTIN_XXH3)
    if [ "$variant" = system ] && pkg-config --exists libxxhash 2>/dev/null; then
        read -r -a extra <<<"$(pkg-config --cflags libxxhash)"
        flags+=("${extra[@]}")
    fi
    rm -f "$OUT"/*.o
    for source in CDiffCore/*.c; do
        "$CLANG" "${flags[@]}" -c "$source" -o "$OUT/$(basename "$source" .c).o"
    done
    foreign=$(nm -g --defined-only "$OUT"/*.o | awk 'NF == 3 { print $3 }' | grep -v '^dc_' || true)
    count=$(nm -g --defined-only "$OUT"/*.o | awk 'NF == 3' | wc -l)
    if [ -n "$foreign" ]; then
        echo "check-symbols ($variant): exported symbols without the dc_ prefix:"
        echo "$foreign"
        status=1
    else
        echo "check-symbols ($variant): $count exported symbols, all dc_-prefixed"
    fi
done
exit $status
