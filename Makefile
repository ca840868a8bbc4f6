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

# The flagship job. Until the simulator lands it is the placement report of the shipped
# 1,024-GPU cluster's storage map (see README).
demo: deps
	$(MAKE) build
	$(GRANARY) crush analyze --map scenarios/crush/gpu-storage-16x24.txt --rule 1 --pool-size 11 \
	  --pg-num 4096 --out-osd 17 --add-host-like server16

bench: deps
	$(MAKE) build
	tests/bench/crush_vs_crushtool.sh $(BUILD_DIR)

soak: deps
	$(MAKE) build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -L soak

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
