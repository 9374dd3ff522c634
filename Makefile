# The two commands of the README: `make demo` and `make test`. Everything else is a step.
JOBS ?= 2
# Tests at once: most wait on processes and sockets (ctest -j2 kept the 2 cores 40% busy),
# so twice the cores; the tests that load the machine take the whole budget (PROCESSORS).
TEST_JOBS ?= 4
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
CMAKE_FLAGS ?=

.PHONY: all deps deps-test configure build demo test test-release test-release-all test-asan build-asan build-fuzz test-fuzz bench package format lint clean

all: build

deps:
	@bash scripts/bootstrap.sh

# The npm packages the integration tests run too (tests/search_eval: four real MCP servers),
# installed from the committed lock file before ctest starts (run.sh does the same for e2e).
deps-test:
	@bash scripts/bootstrap.sh --with-node
	@cd tests/e2e && if [ ! -f node_modules/.package-lock.json ] || \
	  [ package-lock.json -nt node_modules/.package-lock.json ]; then \
	  npm ci --no-audit --no-fund; fi
	@cd tests/clients && if [ ! -f node_modules/.package-lock.json ] || \
	  [ package-lock.json -nt node_modules/.package-lock.json ]; then \
	  npm ci --no-audit --no-fund; fi

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# Only the binary: a newcomer's first run should not wait for the test suite to compile.
demo: configure
	cmake --build $(BUILD) --target sluice -j$(JOBS)
	$(BUILD)/src/sluice demo

# Every test: the whole suite under ASan+UBSan, the benchmarks' smoke runs in the release
# build they measure, then the fuzz targets. (Running the whole suite a second time in the
# release build doubled the compile time of CI for no check ASan+UBSan does not make:
# `make test-release-all` still does it.)
test: test-release test-asan test-fuzz

# What the benchmarks' smoke runs (ctest label bench-smoke) need, and nothing else.
BENCH_TARGETS = sluice fixture_server http_fixture_server sluice_bench sluice_latency \
  sluice_http_load sluice_catalog_scale sluice_remote_call

test-release: deps-test configure
	cmake --build $(BUILD) -j$(JOBS) --target $(BENCH_TARGETS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600 -L bench-smoke

test-release-all: deps-test build
	cd $(BUILD) && ctest --output-on-failure -j$(TEST_JOBS) --timeout 600

build-asan: deps-test
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=asan $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j$(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(TEST_JOBS) --timeout 900 -LE bench-smoke

# The libFuzzer targets (tests/fuzz, docs/fuzzing.md): clang-15, the libraries instrumented
# with ASan+UBSan, only what the targets link. Each replays its committed corpus (ctest, label
# fuzz), then fuzzes for FUZZ_SECONDS over a copy of it.
build-fuzz:
	@bash scripts/bootstrap.sh --with-fuzz
	CC=clang-15 CXX=clang++-15 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSLUICE_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) --target fuzzers -j$(JOBS)

test-fuzz: build-fuzz
	cd $(FUZZ_BUILD) && ctest --output-on-failure -j$(JOBS) -L fuzz --timeout 600
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The Debian package: $(BUILD)/sluice_<version>_<arch>.deb (packaging/, docs/install.md).
package: configure
	cmake --build $(BUILD) --target sluice sluice_docs -j$(JOBS)
	cd $(BUILD) && cpack -G DEB

bench: build
	$(BUILD)/bench/sluice_bench

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

lint: build
	clang-tidy -p $(BUILD) $$(git ls-files 'src/*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
