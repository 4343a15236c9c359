# hbg — the two commands on the README's first screen, and their helpers.
#
#   make run    the main job: qwen, bind measured over 6 rounds, phase table
#   make test   the whole suite: plain, ASan+UBSan, TSan builds, and fuzzing
#
# CI builds with -DHBG_WERROR=ON (warnings are errors); a plain cmake build
# warns only.
#
# Both install what they need first (Debian packages via apt-get as root;
# otherwise they print the exact command and stop). ./make.sh does the same
# on a machine that does not even have make yet.

BUILD      ?= build
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
ROUNDS     ?= 6
FUZZ_SECONDS ?= 60
OUT        ?= outputs

.PHONY: all deps speedscope-deps build run test check test-asan test-tsan fuzz fuzz-merge clean

all: build

deps:
	@./scripts/deps.sh

# node, npm and the pinned modules of the speedscope consumer test
# (test_tools_speedscope; skipped without them unless HBG_REQUIRE_SPEEDSCOPE=1).
speedscope-deps: deps
	@./scripts/deps-speedscope.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DHBG_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@./scripts/main-job.sh $(BUILD)/hbg $(ROUNDS) $(OUT)

# The plain suite only (fast, for development).
check: build speedscope-deps
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps speedscope-deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DHBG_SANITIZE=address -DHBG_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug -DHBG_SANITIZE=thread -DHBG_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS)
	@cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L threaded

fuzz: deps
	@CC=clang cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=Debug -DHBG_FUZZ=ON -DHBG_TESTS=OFF -DHBG_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS)
	@./scripts/fuzz.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

# Grows the committed corpora with what `make fuzz` found (then commit them).
fuzz-merge:
	@./scripts/fuzz.sh $(BUILD)-fuzz merge

# The whole suite, as CI runs it.
test: check test-asan test-tsan fuzz

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
