# reqsched top-level Makefile. Entry points (README, "The two commands"):
#   make          install build dependencies, build libreqsched, the helper
#                 and the patched Squid into build/
#   make check    all of the above, then every test
#   make demo     the field-trial scenario on the testbed, all modes
#   make bench    the benchmarks
# Each component contributes its targets from mk/<component>.mk by appending
# to ALL_TARGETS, CHECK_TARGETS, BENCH_TARGETS.
TOP     := $(CURDIR)
BUILD   := $(TOP)/build
PREFIX  := $(BUILD)
STAMPS  := $(BUILD)/stamps
export PKG_CONFIG_PATH := $(PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
# The patched Squid and its unit tests link build/lib/libreqsched.so without
# an rpath: everything make starts finds it here. A caller's LD_LIBRARY_PATH
# (e.g. a debug build of libreqsched) comes first.
export LD_LIBRARY_PATH := $(if $(LD_LIBRARY_PATH),$(LD_LIBRARY_PATH):)$(PREFIX)/lib
# ccache: share hits between clones in different directories (CI builds in a
# fresh clone); paths under TOP are rewritten relative before hashing.
export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := 1

ALL_TARGETS   :=
CHECK_TARGETS :=
BENCH_TARGETS :=

.PHONY: all check demo bench deps clean
all: deps

deps: $(STAMPS)/deps
$(STAMPS)/deps: scripts/install-deps mk/apt-packages.txt mk/python-packages.txt
	@mkdir -p $(STAMPS)
	scripts/install-deps
	@touch $@

include mk/warnings.mk
include $(sort $(filter-out mk/warnings.mk,$(wildcard mk/*.mk)))

all: $(ALL_TARGETS)
check: all $(CHECK_TARGETS)
	@echo "make check: all test suites passed"
bench: all $(BENCH_TARGETS)

clean:
	rm -rf $(BUILD)
