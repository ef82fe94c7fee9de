# opsim developer loop.  Every target sets up what it needs on a fresh Debian machine:
# Debian packages (fio, gdisk, parted) via apt-get when missing, a Python venv in .venv,
# and the Rust extension built in release mode by maturin.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
export CARGO_TERM_COLOR := never
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Python keeps its compiled modules (__pycache__, ignored by git) even where the environment says
# not to: the suite starts hundreds of `opsim` processes and three pytest processes that would
# each compile opsim and rewrite every test module's asserts again (the collection: 6.8 s, 2.9 s
# with them kept), and the QEMU guest imports the same files through 9p under emulation.
unexport PYTHONDONTWRITEBYTECODE

# Debian packages the tests and the measurement harness use: command -> package.  Installed by
# tools/apt_install.sh, which waits for apt's locks (another apt-get, unattended-upgrades) instead of failing.
SYSDEPS := fio:fio sgdisk:gdisk parted:parted blkid:util-linux chromium:chromium
# ... and the QEMU guest of tests/vm/ (plus Debian's kernel image in /boot). Where these cannot be
# installed, make goes on and the guest tests skip, saying what is missing.
VMDEPS := qemu-system-x86_64:qemu-system-x86 busybox:busybox-static modprobe:kmod nvme:nvme-cli smartctl:smartmontools \
  hdparm:hdparm jq:jq

.PHONY: all setup sysdeps qemu-backports venv build test test-fast test-rust test-python lint fuzz bench demo clean fmt docs-figures

all: build

sysdeps:
	@missing=""; for pair in $(SYSDEPS); do cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || [ -x /usr/sbin/$$cmd ] || [ -x /sbin/$$cmd ] || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  tools/apt_install.sh $$missing; \
	fi
	@missing=""; for pair in $(VMDEPS); do cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || [ -x /usr/sbin/$$cmd ] || [ -x /sbin/$$cmd ] || missing="$$missing $$pkg"; done; \
	ls /boot/vmlinuz-* >/dev/null 2>&1 || missing="$$missing linux-image-amd64"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the QEMU guest tests:$$missing"; \
	  tools/apt_install.sh --no-sudo-prompt $$missing \
	    || echo "warning: could not install$$missing: the tests in tests/vm/ will be skipped"; \
	fi

$(VENV)/.deps-stamp: requirements-dev.txt
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.deps-stamp

setup: sysdeps venv qemu-backports

# QEMU >= 8.0 (FDP, OCP log) for tests/vm/test_vm_fdp.py: Debian bookworm-backports' package unpacked
# into .venv/qemu-backports with a private apt configuration (no system install; tools/fetch_qemu_backports.sh).
qemu-backports: venv
	@[ -x $(VENV)/qemu-backports/usr/bin/qemu-system-x86_64 ] || tools/fetch_qemu_backports.sh $(VENV)/qemu-backports \
	  || echo "warning: no QEMU >= 8.0 from bookworm-backports: tests/vm/test_vm_fdp.py will be skipped"

build: venv
	VIRTUAL_ENV=$(VENV) PATH=$(VENV)/bin:$$PATH $(VENV)/bin/maturin develop --release -q

# make test runs the lint gate first: formatting (rustfmt, ruff format), clippy with warnings
# as errors, ruff's lint rules (imports at the top, function length) and mypy on the package, and
# import-linter's layers contract (configuration in rustfmt.toml and pyproject.toml; ARCHITECTURE.md).
test: setup build lint test-rust test-python

lint: venv
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	$(VENV)/bin/ruff format --check python tests tools
	$(VENV)/bin/ruff check python tests tools
	$(VENV)/bin/mypy
	PYTHONPATH=python $(VENV)/bin/lint-imports

# The figures of the docs that are generated (docs/figures/; each with its data as JSON).
docs-figures: build
	$(PY) -m opsim.validation.zoned -o docs/figures/zoned-waf.svg
	$(PY) -m opsim.validation.zoned --preset micron-7450-pro-960gb --scale 16 \
	  --zone-sizes 192MiB,384MiB,768MiB,3GiB,12GiB,16GiB --active 1,4,16 -o docs/figures/zoned-waf-7450.svg

test-rust:
	cargo test --workspace --exclude opsim-py -q

# The Python suite on every core (pytest-xdist): each test goes to whichever worker is free, but the
# QEMU guests and the real fio runs form one group on one worker, and the calibrations of the preset
# inputs another (tests/xdist_groups.py).  A worker per core: a third worker on two cores (to fill the
# io group's waits for QEMU and fio) starved the guest, whose fio then reported no I/O for 180 s.
PYTEST_WORKERS ?= auto
test-python: build
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# The quick loop while changing code (under 2 minutes here): the Rust suite and the Python unit tests,
# without the QEMU guests, real fio runs and long simulations (markers vm, fio, slow); make test runs all.
test-fast: build
	cargo test --workspace --exclude opsim-py -q
	$(PY) -m pytest -q -n auto --dist loadgroup -m "not vm and not fio and not slow"

# Fuzzing the parsers of outside input (config, traces, smartctl/nvme-cli JSON): a short pass
# runs in `make test` (tests/smart/test_smart_fuzz.py, crates/opsim-core/tests/fuzz_parsers.rs); this
# runs a million inputs per parser (counts and times in BENCHMARKS.md, section Fuzzing).
FUZZ_COUNT ?= 1000000
FUZZ_SEED ?= 1
fuzz: build
	cargo run --release -q -p opsim-core --example fuzz -- --parser config --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)
	cargo run --release -q -p opsim-core --example fuzz -- --parser trace --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)
	cargo run --release -q -p opsim-core --example fuzz -- --parser fio-job --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)
	$(PY) tests/smart_fuzz.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)

bench: build
	cargo bench -p opsim-core --bench ftl
	$(VENV)/bin/opsim bench

demo: setup build
	$(VENV)/bin/opsim demo

fmt: venv
	cargo fmt --all
	$(VENV)/bin/ruff format python tests
	$(VENV)/bin/ruff check --fix python tests

clean:
	cargo clean
	rm -rf $(VENV) python/opsim/*.so
