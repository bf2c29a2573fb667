# The two quick-start commands are `make bench` and `make test`; each first installs
# libxxhash-dev when its header is missing (a fresh machine of this project's kind).
# The clang that ships with the Swift toolchain (libFuzzer and the sanitizers come with it).
SWIFT_CLANG ?= $(dir $(realpath $(shell command -v swift)))clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build-fuzz

PREFIX ?= /usr/local

.PHONY: test-spark bench-spark postgres postgres-stop serve-cluster test-live-query test-live-query-restart bench-files serve browser-test load-test load-test-cluster install compare-tools deps docs test test-builtin-xxh3 test-tsan check-compile check-symbols check-pkgconfig bench bench-smoke bench-core bench-floor fuzz-build fuzz-smoke fuzz-replay fuzz-campaign fuzz-live-query cflite-check

# xxHash's header: installed with apt on Debian/Ubuntu as root; elsewhere the build uses the
# built-in XXH3, and this says what to install for the system one.
deps:
	@if [ ! -f /usr/include/xxhash.h ] && ! pkg-config --exists libxxhash 2>/dev/null; then \
		if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
			echo "installing libxxhash-dev"; \
			apt-get update -qq && apt-get install -y libxxhash-dev; \
		else \
			echo "no system xxHash: building with DiffEngine's own XXH3 (same hashes);"; \
			echo "for the system one: apt-get install libxxhash-dev (Debian/Ubuntu), brew install xxhash (macOS)"; \
		fi; \
	fi

# Which XXH3 the build must use: the system one when its header is found (as SwiftPM finds
# it), else the built-in one; HashingTests fails if the build picked the other.
EXPECTED_XXH3 := $(shell if [ -f /usr/include/xxhash.h ] || pkg-config --exists libxxhash 2>/dev/null; then echo system; else echo builtin; fi)

# The CLI's package and the app example build in the library's scratch folder: they depend on
# the library by path, so its modules, built there already with the same flags, are not
# compiled again (each would otherwise build the whole library once more, 25-35 s).
test: deps
	DIFFENGINE_EXPECTED_XXH3=$(EXPECTED_XXH3) swift test
	swift test --package-path Tools --scratch-path "$(CURDIR)/.build"

# The DocC documentation (the API and the articles of Sources/DiffEngine/DiffEngine.docc)
# with the toolchain's docc, into .build/docs; no package dependency needed.
docs: deps
	mkdir -p .build/symbol-graphs
	swift build --target DiffEngine -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build/symbol-graphs
	docc convert Sources/DiffEngine/DiffEngine.docc --additional-symbol-graph-dir .build/symbol-graphs \
		--fallback-display-name DiffEngine --fallback-bundle-identifier org.diffengine.DiffEngine \
		--output-path .build/docs
	@echo "documentation: .build/docs (serve it with any static file server; open /documentation/diffengine)"

# The core built with its own XXH3 instead of the system xxHash (as on iOS): the hashing and
# golden tests must pass unchanged. With every hash equal to the system's (which fuzz_xxh3
# also checks on random inputs), all past the hash is the code `make test` runs: its
# property and hostile-input tests would repeat that run exactly.
BUILTIN_XXH3_TESTS := HashingTests|GoldenTests|CoreStatusTests
test-builtin-xxh3:
	DIFFENGINE_EXPECTED_XXH3=builtin swift test --scratch-path .build-builtin -Xcc -DDC_BUILTIN_XXH3 \
		--filter "$(BUILTIN_XXH3_TESTS)"

# The live collection, live feed, Differ and parallel-diff tests under ThreadSanitizer (Swift
# Testing runs them on many threads at once), on the core built with its own XXH3, with the
# tests of test-builtin-xxh3: CI checks both in one build, which saves it a whole debug build.
# Not the Differ's three random-stream tests: each drives its own differs on one thread, so
# under ThreadSanitizer they find nothing the other Differ tests running beside them do not,
# and they took two thirds of the stage (149 s of test run with them, 53 s without);
# make test runs them.
TSAN_SKIPPED_TESTS := rowsChangedNearTheEnd|streamsReproduceEverySnapshot|integerFieldRowsEqualOneShotDiffs
test-tsan:
	DIFFENGINE_EXPECTED_XXH3=builtin swift test --sanitize=thread --scratch-path .build-tsan -Xcc -DDC_BUILTIN_XXH3 \
		--filter "LiveCollection|LiveFeed|DifferTests|ParallelDiffTests|$(BUILTIN_XXH3_TESTS)" \
		--skip "$(TSAN_SKIPPED_TESTS)"

# Compile-time facts stay compile-time facts: scripts/compile-checks/*.swift compile, and
# each *.fail.swift fails with the message it names.
check-compile: deps
	bash scripts/check-compile.sh

# Every symbol the C core exports is dc_-prefixed (both hash builds).
check-symbols: deps
	bash scripts/check-symbols.sh

# A build that finds xxHash only through pkg-config (needs root: hides the system header).
check-pkgconfig: deps
	bash scripts/check-pkgconfig.sh

# diffengine timed end to end on generated 1,000,000-row CSV and JSON Lines pairs.
bench-files: deps
	swift build -c release --package-path Benchmarks --product diffengine
	swift run -c release --package-path Benchmarks diffbench files --rows 1000000 --runs 5

# A PostgreSQL server from Debian's package, in a scratch folder on a loopback port (PG_PORT,
# 54329 by default), for the live-query service on PostgreSQL; `make postgres-stop` stops it.
postgres:
	bash scripts/postgres.sh start

postgres-stop:
	bash scripts/postgres.sh stop

# The live-query service (Examples/LiveQueryService) on http://127.0.0.1:8080/.
serve:
	swift run -c release --package-path Examples/LiveQueryService live-query-service --seed 10000 --insecure-no-auth

# NODES nodes of the service on one PostgreSQL (started here, stopped on Ctrl-C), ports 8081….
NODES ?= 3
serve-cluster:
	bash Examples/LiveQueryService/scripts/serve-cluster.sh $(NODES)

# The service's tests on SQLite and on PostgreSQL (started for them, then stopped), with the
# two-node cluster's tests (CI runs it). The PostgreSQL-restart test runs on its own, `make
# test-live-query-restart`: in one CI run, beside the other suites, postgres-nio's pool made no
# connection at all after the restart and every write waited on it (an open bug).
test-live-query:
	bash Examples/LiveQueryService/scripts/test.sh --skip nodesReconnectAfterPostgresRestarts

# The PostgreSQL-restart test alone, RUNS times (default 20).
RUNS ?= 20
test-live-query-restart:
	for run in $$(seq $(RUNS)); do bash Examples/LiveQueryService/scripts/test.sh --filter nodesReconnectAfterPostgresRestarts || exit 1; done

# The service's page in headless Chromium against 1,000 random writes (CI runs it).
browser-test:
	bash Examples/LiveQueryService/scripts/browser-test.sh

# 1,000 WebSocket clients on loopback for 30 s (figures in Examples/LiveQueryService/README.md).
load-test:
	bash Examples/LiveQueryService/scripts/load-test.sh

# 1,500 clients over 3 nodes on one PostgreSQL for 30 s, one node killed at second 10.
load-test-cluster:
	bash Examples/LiveQueryService/scripts/load-test-cluster.sh

# The Spark integration (integrations/spark) in local mode: its tests, and every diff method
# side by side (figures in integrations/spark/README.md), e.g.
# make bench-spark ARGS="--rows 5000000 --changes 1%".
test-spark:
	bash integrations/spark/scripts/run.sh test

bench-spark:
	bash integrations/spark/scripts/run.sh bench $(ARGS)

# The `diffengine` CLI with the Swift runtime linked in, copied to PREFIX/bin.
install: deps
	swift build -c release --package-path Tools --scratch-path .build-install --product diffengine --static-swift-stdlib
	install -d "$(PREFIX)/bin"
	install -s -m 755 .build-install/release/diffengine "$(PREFIX)/bin/diffengine"
	@echo "installed $(PREFIX)/bin/diffengine"

# diffengine beside DuckDB and polars (from PyPI, into a scratch venv) on one generated pair
# of 1,000,000-row CSV files (FORMAT=jsonl: JSON Lines files); ROWS=20000 adds csv-diff and daff.
compare-tools: deps
	bash Benchmarks/compare/compare-tools.sh

bench: deps
	swift run -c release --package-path Benchmarks diffbench

bench-smoke: deps
	swift build --package-path Examples/CarsExample --scratch-path "$(CURDIR)/.build"
	swift run -c release --package-path Benchmarks diffbench --size 5000 --runs 5
	swift run -c release --package-path Benchmarks diffbench --scenario hostile --runs 1
	swift build -c release --package-path Benchmarks --product diffengine
	swift run -c release --package-path Benchmarks diffbench files --rows 20000 --runs 1

# The C core's passes timed one by one (no Swift layer); arguments after ARGS=, e.g.
# make bench-core ARGS="1000000 10 100000 20000 100000 20000" (see Benchmarks/core/passes.c).
bench-core: deps
	mkdir -p .build-core
	$(SWIFT_CLANG) -O2 -DNDEBUG -std=c11 -Wall -Wextra -ICDiffCore/include CDiffCore/*.c Benchmarks/core/passes.c -o .build-core/passes
	.build-core/passes $(ARGS)

# The least a Differ call can cost: comparing a new snapshot, from memory, with the previous
# one (see Benchmarks/core/snapshot_floor.c); e.g. make bench-floor ARGS="1000000 16 40".
bench-floor:
	mkdir -p .build-core
	$(SWIFT_CLANG) -O2 -DNDEBUG -std=c11 -Wall -Wextra Benchmarks/core/snapshot_floor.c -o .build-core/snapshot_floor
	.build-core/snapshot_floor $(ARGS)

# Every harness, built twice: with libFuzzer (to fuzz) and as a plain replay program.
fuzz-build: deps
	bash fuzz/build.sh

# Each harness fuzzed FUZZ_SECONDS from its committed corpus (every corpus input runs first).
fuzz-smoke: deps
	bash fuzz/build.sh fuzz
	bash fuzz/run.sh $(FUZZ_SECONDS)

# The committed corpora replayed by the plain builds, no libFuzzer.
fuzz-replay: deps
	bash fuzz/build.sh replay
	bash fuzz/run.sh 0

# The live-query service's harness (access tokens and query parameters): built, its corpus
# replayed, then fuzzed FUZZ_SECONDS.
fuzz-live-query:
	bash Examples/LiveQueryService/fuzz/run.sh $(FUZZ_SECONDS)

# .clusterfuzzlite/build.sh run here under the OSS-Fuzz build contract (the variables set
# as its base builder sets them), then every harness on its seed corpus.
cflite-check: deps
	bash fuzz/clusterfuzzlite-check.sh

# A fuzzing campaign of HOURS hours on both cores (campaign builds: UBSan and the core's
# checks, no ASan), one line per harness appended to fuzz/campaign.log.
HOURS ?= 1
fuzz-campaign: deps
	bash fuzz/campaign.sh $(HOURS)
