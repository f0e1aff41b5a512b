# SPDX-License-Identifier: GPL-2.0-or-later
# reqsched top-level Makefile. Entry points (README, "The two commands"):
#   make deps     install the Debian and Python packages needed to build and
#                 test (scripts/install-deps; idempotent, needs root or sudo)
#   make          build libreqsched, the helper and the patched Squid into
#                 build/ (never installs packages: fails and says to run
#                 `make deps` when one is missing)
#   make check    make deps, all of the above, then every test
#   make demo     make deps, all, then the field-trial scenario on the testbed
#   make bench    the benchmarks
#   make deb, make check-deb   Debian packages and their install test (mk/deb.mk)
# Each component contributes its targets from mk/<component>.mk by appending
# to ALL_TARGETS, CHECK_TARGETS, BENCH_TARGETS.
TOP     := $(CURDIR)
BUILD   := $(TOP)/build
PREFIX  := $(BUILD)
STAMPS  := $(BUILD)/stamps
export PKG_CONFIG_PATH := $(PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
# The patched Squid and its unit tests link build/lib/libreqsched.so (the
# series adds no rpath; scripts/squid-build gives the build tree's Squid a
# RUNPATH for its SMP kids): everything make starts finds it here. A caller's
# LD_LIBRARY_PATH (e.g. a debug build of libreqsched) comes first.
export LD_LIBRARY_PATH := $(if $(LD_LIBRARY_PATH),$(LD_LIBRARY_PATH):)$(PREFIX)/lib
# ccache: share hits between clones in different directories (CI builds in a
# fresh clone); paths under TOP are rewritten relative before hashing.
export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := 1

ALL_TARGETS   :=
CHECK_TARGETS :=
BENCH_TARGETS :=

.PHONY: all check demo bench deps clean
all:

# `make deps` installs; $(STAMPS)/deps, which the build steps depend on, only
# checks (scripts/install-deps --check) and fails naming what is missing.
# `make check` and `make demo` install first: under -j the check waits for it.
deps:
	scripts/install-deps
	@mkdir -p $(STAMPS) && touch $(STAMPS)/deps
$(STAMPS)/deps: scripts/install-deps mk/apt-packages.txt mk/python-packages.txt
	@scripts/install-deps --check
	@mkdir -p $(STAMPS) && touch $@
ifneq ($(filter check demo check-deb,$(MAKECMDGOALS)),)
$(STAMPS)/deps: | deps
endif

include mk/warnings.mk
include $(sort $(filter-out mk/warnings.mk,$(wildcard mk/*.mk)))

all: $(ALL_TARGETS)
check: deps all $(CHECK_TARGETS)
	@echo "make check: all test suites passed"
bench: all $(BENCH_TARGETS)
demo: deps

clean:
	rm -rf $(BUILD)
