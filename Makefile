# The two commands of the README:  make run  /  make test
# Both install missing Debian packages, configure and build first.
BUILD ?= build
JOBS ?= 2
DEBIAN_PACKAGES = g++ cmake make pkg-config libcaf-dev libcaf-openssl0.17 \
  libsimdjson-dev libfmt-dev libboost1.81-dev libboost-filesystem1.81-dev \
  libtomlplusplus-dev libcli11-dev libcurl4-openssl-dev libvterm-dev libssl-dev \
  git bc less

.PHONY: all deps configure build run test bench clean

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

clean:
	rm -rf $(BUILD)
