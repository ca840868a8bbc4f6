# Granary: the two commands of the quick start are `make demo` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
GRANARY := $(BUILD_DIR)/cli/granary

.PHONY: all deps build test sanitize tsan fuzz demo bench soak format clean validation-table

all: build

deps:
	scripts/install-deps.sh all

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Installs what is missing, builds, runs every test except the long soak/scale runs.
test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE soak
	$(MAKE) sanitize

# engine_tests, models_tests and realmode_tests built with ASan + UBSan in build-asan/ and run; any report fails
# (docs/robustness.md). sim/ and cli/ stay out: SimGrid's context switching defeats ASan.
# -O1 -g1 and test discovery at ctest time (not at build time) keep it quick.
SANITIZE_DIR ?= build-asan
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	GRANARY_E2E_SEEDS=3
sanitize: deps
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DGRANARY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	  '-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1' -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST >/dev/null
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target engine_tests models_tests realmode_tests
	$(SANITIZE_ENV) $(SANITIZE_DIR)/tests/engine_tests --gtest_brief=1
	$(SANITIZE_ENV) $(SANITIZE_DIR)/tests/models_tests --gtest_brief=1
	$(SANITIZE_ENV) $(SANITIZE_DIR)/tests/realmode_tests --gtest_brief=1

# realmode_tests built with ThreadSanitizer in build-tsan/ and run: real mode's tasks are threads
# (RealEnv), so its races are found here; any report fails (docs/robustness.md).
TSAN_DIR ?= build-tsan
tsan: deps
	cmake -S . -B $(TSAN_DIR) -G Ninja -DGRANARY_TSAN=ON -DCMAKE_BUILD_TYPE=Debug \
	  '-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1' -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST >/dev/null
	cmake --build $(TSAN_DIR) -j $(JOBS) --target realmode_tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_DIR)/tests/realmode_tests --gtest_brief=1

# The libFuzzer targets of fuzz/ (clang, ASan, UBSan) in build-fuzz/, each run FUZZ_SECONDS from
# its seed corpus; fails on any finding (fuzz/run.sh, docs/robustness.md).
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz:
	scripts/install-deps.sh fuzz
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DGRANARY_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=Debug '-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1' >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzzers
	fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The flagship job: the 128-node, 1,024-GPU read storm (see README).
demo: deps
	$(MAKE) build
	$(GRANARY) run scenarios/read-storm-128-dgx-a100.json --out read-storm-128-dgx-a100.report.json

bench: deps
	$(MAKE) build
	tests/bench/sim_scaling.sh $(BUILD_DIR)
	tests/bench/crush_vs_crushtool.sh $(BUILD_DIR)
	tests/bench/failure_bench.sh $(BUILD_DIR)
	tests/bench/block_bench.sh $(BUILD_DIR)
	tests/bench/durability_sim_mc.sh $(BUILD_DIR)
	tests/bench/cost_estimate_bench.sh $(BUILD_DIR)
	tests/bench/codec_bench.sh $(BUILD_DIR)
	tests/bench/uring_device_bench.sh $(BUILD_DIR)
	tests/bench/transport_bench.sh $(BUILD_DIR)
	tests/bench/osd_bench.sh $(BUILD_DIR)
	tests/bench/calibration_check.sh $(BUILD_DIR)
	tests/bench/planner_bench.sh $(BUILD_DIR)

soak: deps
	$(MAKE) build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L soak

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

# Runs every comparison with a published figure (MLPerf Storage v1.0, Ceph recovery) and writes
# the table of docs/validation.md (scripts/validation_table.py; tens of minutes on one core).
VALIDATION_JOBS ?= 1
validation-table: build
	scripts/validation_table.py --write --jobs $(VALIDATION_JOBS) --granary $(GRANARY)
