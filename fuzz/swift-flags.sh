# Sourced by fuzz/build.sh, fuzz/clusterfuzzlite-check.sh and .clusterfuzzlite/build.sh: how
# the Swift harnesses are built for libFuzzer.
#
# OSS_FUZZ_SWIFTFLAGS: what OSS-Fuzz's Swift builder exports as SWIFTFLAGS (its
# precompile_swift, libFuzzer with AddressSanitizer). fuzz/build.sh builds with exactly these
# flags, in the order .clusterfuzzlite/build.sh passes them, into the scratch folder
# fuzz/clusterfuzzlite-check.sh gives it (.build-fuzz/swift): whichever of the two runs
# second finds the harnesses built instead of compiling them again.
# shellcheck disable=SC2034 # used by the scripts that source this file
OSS_FUZZ_SWIFTFLAGS="-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -static-stdlib --static-swift-stdlib --sanitize=address"

# Coverage of the Swift modules is asked for explicitly: -sanitize=fuzzer alone leaves them
# uninstrumented, and libFuzzer then reports "no interesting inputs" and fuzzes blind
# (fuzz/run.sh fails on such a build). SwiftPM is told of the fuzzer too (--sanitize=fuzzer):
# it then lets libFuzzer's main stand in for the executable's own.
# shellcheck disable=SC2034
SWIFT_COVERAGE="-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table"
