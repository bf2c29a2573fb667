# The two quick-start commands are `make bench` and `make test`; each first installs
# libxxhash-dev when its header is missing (a fresh machine of this project's kind).
SWIFT_CLANG ?= /opt/swift/usr/bin/clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build-fuzz

.PHONY: deps test bench bench-smoke bench-core fuzz-build fuzz-smoke fuzz-replay

deps:
	@if [ ! -f /usr/include/xxhash.h ]; then \
		echo "installing libxxhash-dev"; \
		apt-get update -qq && apt-get install -y libxxhash-dev; \
	fi

test: deps
	swift test
	swift test --package-path Benchmarks

bench: deps
	swift run -c release --package-path Benchmarks diffbench

bench-smoke: deps
	swift run -c release --package-path Benchmarks diffbench --size 5000 --runs 5
	swift run -c release --package-path Benchmarks diffbench files --rows 20000 --runs 1

# The C core's passes timed one by one (no Swift layer); arguments after ARGS=, e.g.
# make bench-core ARGS="1000000 10 100000 20000 100000 20000" (see Benchmarks/core/passes.c).
bench-core: deps
	mkdir -p .build-core
	$(SWIFT_CLANG) -O2 -DNDEBUG -std=c11 -Wall -Wextra -ICDiffCore/include CDiffCore/*.c Benchmarks/core/passes.c -o .build-core/passes
	.build-core/passes $(ARGS)

# Every harness, built twice: with libFuzzer (to fuzz) and as a plain replay program.
fuzz-build: deps
	bash fuzz/build.sh

fuzz-smoke: fuzz-build
	bash fuzz/run.sh $(FUZZ_SECONDS)

fuzz-replay: fuzz-build
	bash fuzz/run.sh 0
