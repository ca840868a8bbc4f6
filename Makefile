# Granary: the two commands of the quick start are `make demo` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
GRANARY := $(BUILD_DIR)/cli/granary

.PHONY: all deps build test demo bench soak format clean

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

soak: deps
	$(MAKE) build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L soak

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
