# The two commands of the README:  make run  /  make test
# Both install missing Debian packages, configure and build first.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= 2
# 0: each fuzz target runs its fixed number of inputs (tests/fuzz/run_all), the same
# on every machine; N: each runs N seconds instead (a longer local run).
FUZZ_SECONDS ?= 0
# A fixed seed keeps CI reproducible; FUZZ_SEED=0 lets libFuzzer pick one (exploring).
FUZZ_SEED ?= 1
FUZZ_TARGETS = argv_template tool_output tool_arguments provider_stream config mcp_reply conversation_log \
               terminal_screen terminal_text
DEBIAN_PACKAGES = g++ cmake make pkg-config libcaf-dev libcaf-openssl0.17 \
  libsimdjson-dev libfmt-dev libboost1.81-dev libboost-filesystem1.81-dev \
  libtomlplusplus-dev libcli11-dev libcurl4-openssl-dev libvterm-dev libssl-dev libmd4c-dev \
  git bc less
# What only the tests need: clang and its runtime for the libFuzzer targets, and the
# openssl command that makes the node tests' TLS certificates.
TEST_PACKAGES = clang libclang-rt-14-dev openssl

.PHONY: all deps test-deps configure build run test check test-asan test-tsan bench fuzz clean

all: build

# Installs the Debian packages of $(1) that are missing.
install_missing = @missing=""; for p in $(1); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

deps:
	$(call install_missing,$(DEBIAN_PACKAGES))

test-deps:
	$(call install_missing,$(DEBIAN_PACKAGES) $(TEST_PACKAGES))

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/jp-actors run examples/quickstart.toml

# The full suite: every test (the benchmark's smoke run and the install test too),
# built once, with ASan and UBSan; then each fuzz target on its inputs. One build,
# not a plain one and a sanitized one: on 2 cores the two builds alone took most of
# the 20 minutes the suite may take.
test: test-deps
	$(MAKE) test-asan
	$(MAKE) fuzz
	@echo "make test: every test passed under ASan and UBSan (the test files' own code under ASan); fuzz targets ran their inputs (tests/fuzz/run_all)"

# The tests alone (the quick loop while developing).
check: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) \
	  || { $(CURDIR)/tests/failed_checks $(BUILD)/Testing/Temporary/LastTest.log; exit 1; }

# Not one of the two commands: the benchmark of BENCH.md (bench/README.md).
bench: configure
	BUILD=$(BUILD) bench/run $(BENCH_ARGS)

# The whole suite built with AddressSanitizer and UndefinedBehaviorSanitizer (the
# test files' own code with ASan only: tests/CMakeLists.txt says why).
# Unoptimized (its compile costs about 1.3x the plain -O2 one). UBSan's checks of
# every pointer use are off: vptr triples compile times on CAF's templates; null,
# alignment, object-size and pointer-overflow made the library's files 40-55% slower
# to compile (turn_actor.cpp 29 s against 21), and ASan stops a null or out-of-bounds
# access itself. Its checks of arithmetic, shifts, bounds, enums, bools and returns
# stay; the fuzz targets keep them all (tests/fuzz).
SANITIZE = -fsanitize=address,undefined -fno-sanitize=vptr,null,alignment,object-size,pointer-overflow \
  -fno-omit-frame-pointer
test-asan: deps
	@[ -f $(BUILD)-asan/CMakeCache.txt ] || cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Sanitize \
	  -DCMAKE_CXX_FLAGS="-O0 -g1 $(SANITIZE)" -DCMAKE_C_FLAGS="-O0 -g1 $(SANITIZE)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE)" -DJP_TESTS_UBSAN=OFF
	cmake --build $(BUILD)-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizer/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/sanitizer/ubsan.supp \
	  ctest --test-dir $(BUILD)-asan --output-on-failure -j$(JOBS) \
	  || { $(CURDIR)/tests/failed_checks $(BUILD)-asan/Testing/Temporary/LastTest.log; exit 1; }

# Not part of `make test`: the actor and process tests built with ThreadSanitizer
# (tests/sanitizer/tsan.supp says what is suppressed). The three tests that push 4 to
# 64 MiB through a handle are left out: under TSan each takes more than 5 minutes.
TSAN_TESTS = registry_test await_test turn_test handle_test process_test oneshot_test spawn_refusal_test \
  io_thread_send_test timeout_clock_test
test-tsan: deps
	@[ -f $(BUILD)-tsan/CMakeCache.txt ] || cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Sanitize \
	  -DCMAKE_CXX_FLAGS="-O1 -g1 -fsanitize=thread" -DCMAKE_C_FLAGS="-O1 -g1 -fsanitize=thread" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread"
	cmake --build $(BUILD)-tsan -j$(JOBS) $(addprefix --target ,$(TSAN_TESTS))
	@for t in $(TSAN_TESTS); do echo "tsan $$t"; \
	  TSAN_OPTIONS=halt_on_error=1:suppressions=$(CURDIR)/tests/sanitizer/tsan.supp \
	  $(BUILD)-tsan/tests/$$t -r 300 \
	    -T '^(huge output|a child that never reads stdin|apply to a tool that never reads stdin)' > $(BUILD)-tsan/$$t.log 2>&1 \
	  || { cat $(BUILD)-tsan/$$t.log; exit 1; }; done

# The libFuzzer targets of tests/fuzz (clang, ASan, UBSan), each run on its seed
# corpus (new inputs go to a scratch directory): a fixed number of inputs, or
# FUZZ_SECONDS each.
fuzz: test-deps
	@[ -f $(BUILD)-fuzz/CMakeCache.txt ] || cmake -S . -B $(BUILD)-fuzz -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_C_COMPILER=clang -DJP_FUZZ=ON
	cmake --build $(BUILD)-fuzz -j$(JOBS) $(addprefix --target ,$(addsuffix _fuzz,$(FUZZ_TARGETS)))
	@JOBS=$(JOBS) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) tests/fuzz/run_all $(BUILD)-fuzz $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(BUILD)-fuzz $(BUILD)-asan $(BUILD)-tsan
