# The two commands of the README:  make run  /  make test
# Both install missing Debian packages, configure and build first.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= 2
FUZZ_SECONDS ?= 20
FUZZ_TARGETS = argv_template tool_output tool_arguments provider_stream config
DEBIAN_PACKAGES = g++ cmake make pkg-config libcaf-dev libcaf-openssl0.17 \
  libsimdjson-dev libfmt-dev libboost1.81-dev libboost-filesystem1.81-dev \
  libtomlplusplus-dev libcli11-dev libcurl4-openssl-dev libvterm-dev libssl-dev \
  git bc less

.PHONY: all deps configure build run test test-asan bench fuzz clean

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/jp-actors run examples/quickstart.toml

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# Not one of the two commands: the benchmark of BENCH.md (bench/README.md).
bench: configure
	BUILD=$(BUILD) bench/run $(BENCH_ARGS)

# Not one of the two commands: the whole suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer (the benchmark smoke test left out).
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer
test-asan: deps
	@[ -f $(BUILD)-asan/CMakeCache.txt ] || cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="$(SANITIZE)" -DCMAKE_C_FLAGS="$(SANITIZE)" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
	cmake --build $(BUILD)-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/sanitizer/ubsan.supp \
	  ctest --test-dir $(BUILD)-asan --output-on-failure -j$(JOBS) -LE slow

# Not one of the two commands: the libFuzzer targets of tests/fuzz (clang, ASan, UBSan),
# each run FUZZ_SECONDS on its seed corpus (new inputs go to a scratch directory).
fuzz: deps
	@command -v clang++ >/dev/null || { SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends clang; }
	@[ -f $(BUILD)-fuzz/CMakeCache.txt ] || cmake -S . -B $(BUILD)-fuzz -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_C_COMPILER=clang -DJP_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) $(addprefix --target ,$(addsuffix _fuzz,$(FUZZ_TARGETS)))
	@for t in $(FUZZ_TARGETS); do scratch=$$(mktemp -d); \
	  echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
	  $(BUILD)-fuzz/tests/fuzz/$${t}_fuzz $$scratch tests/fuzz/corpus/$$t -max_total_time=$(FUZZ_SECONDS) \
	    -rss_limit_mb=2048 2>&1 | grep -E "^Done|ERROR|SUMMARY" ; rc=$${PIPESTATUS[0]}; rm -rf $$scratch; \
	  [ $$rc -eq 0 ] || exit $$rc; done

clean:
	rm -rf $(BUILD) $(BUILD)-fuzz $(BUILD)-asan
