# gpuenv — quick start: `make run`, `make test` (Debian 12, as root or with sudo).
.PHONY: test-image-source fuzz all build build-runtime install-missing deps deps-image deps-deploy run test test-unit test-asan test-image test-deploy test-gpu test-gpu-bench clean

JOBS ?= $(shell nproc)
DEB_PACKAGES := cmake make g++ pkg-config ccache clang libclang-rt-14-dev lld \
  libcli11-dev nlohmann-json3-dev libfmt-dev libhwloc-dev libgtest-dev libsqlite3-dev libevent-dev libssl-dev libcrypt-dev libyaml-dev \
  openssh-server openssh-client jupyter-server curl prometheus munge slurmctld slurmd slurm-client python3 \
  mmdebstrap libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc python3-grpcio \
  zsh fish man-db groff-base
# What `make test-image` builds and runs the image with (docs/container.md).
IMAGE_PACKAGES := podman buildah runc mmdebstrap uidmap curl openssh-client python3 python3-yaml
# What `make test-deploy` checks deploy/kubernetes with: promtool, and Node.js
# for the npm validators (tests/kubernetes/package-lock.json). nodejs and npm
# are installed only when no npm is on PATH (NodeSource's nodejs carries its own).
DEPLOY_PACKAGES := prometheus

all: build

# Installs the Debian packages that are missing (and only those).
deps:
	@$(MAKE) --no-print-directory install-missing PACKAGES="$(DEB_PACKAGES)"

deps-image:
	@$(MAKE) --no-print-directory install-missing PACKAGES="$(IMAGE_PACKAGES)"

deps-deploy:
	@$(MAKE) --no-print-directory install-missing PACKAGES="$(DEPLOY_PACKAGES) $$(command -v npm >/dev/null || echo nodejs npm)"

install-missing:
	@missing=$$(for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages:" $$missing; \
	  SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing \
	    || { echo "gpuenv: could not install $$missing; install them with apt-get and retry" >&2; exit 1; }; \
	fi

build: deps
	cmake --preset default >/dev/null
	cmake --build build -j$(JOBS)

# The binary and its bench plugin only: the first output comes before the
# test suite is compiled (`make test` builds the rest).
build-runtime: deps
	cmake --preset default >/dev/null
	cmake --build build -j$(JOBS) --target gpuenv_runtime

run: build-runtime
	./build/gpuenv detect
	@echo
	./build/gpuenv explain

test-unit: build
	./tests/ci/isolated-home.sh ctest --preset default -j$(JOBS) --output-junit $(CURDIR)/build/ctest-junit.xml

# The same tests under AddressSanitizer + UBSan, plus the fuzzers (clang).
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build build-asan -j$(JOBS)
	./tests/ci/isolated-home.sh ctest --preset asan -j$(JOBS) --output-junit $(CURDIR)/build-asan/ctest-junit.xml

# docker/Dockerfile built for real with podman (offline, from local base
# images) and started: Jupyter, SSH, batch jobs, the cache volume.
test-image: build deps-image
	./tests/image/test-image.sh build

# The same, with the image's own build stage compiling gpuenv from source,
# as a plain `docker build -f docker/Dockerfile .` does.
test-image-source: build deps-image
	./tests/image/test-image.sh --from-source build

# deploy/kubernetes validated offline: the Kubernetes OpenAPI schemas, the
# Grafana dashboard's queries, the Prometheus scrape config (promtool).
test-deploy: deps-deploy
	./tests/kubernetes/run.sh

# Each stage in turn, then a table of their minutes and every skipped test
# (tests/ci/stages.sh; under CI=true a skip fails unless allowed there).
test:
	@./tests/ci/stages.sh test-unit test-asan test-deploy test-image

# Long fuzzing, apart from the tests: each fuzzer for FUZZ_SECONDS (default
# 300), its finds kept in build-asan/corpus/NAME.
FUZZ_SECONDS ?= 300
fuzz: deps
	cmake --preset asan -DGPUENV_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	cmake --build build-asan -j$(JOBS) --target fuzz-long

# On a machine with an NVIDIA GPU: the real driver path end to end.
test-gpu: build
	./tests/gpu/run.sh

# Only gpuenv bench and gpuenv check against PyTorch (part of test-gpu).
test-gpu-bench: build
	./tests/gpu/bench.sh

clean:
	rm -rf build build-asan
