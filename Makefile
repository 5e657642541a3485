# Top-level entry points. `make` installs what is missing, builds everything and runs the
# examples; `make test` runs every test suite. Both work on a fresh Debian machine.
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build examples test unit-and-lit fuzz-build fuzz-smoke install clean

all: build examples

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

examples: build
	@scripts/run-examples.sh $(BUILD)

test: build unit-and-lit fuzz-smoke

unit-and-lit:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The fuzz targets need clang (Debian clang-19) and its sanitizer runtimes.
fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DTESSERA_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz-targets

fuzz-smoke: fuzz-build
	@scripts/fuzz-smoke.sh $(FUZZ_BUILD)

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),$(CURDIR)/out/install)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
