# SPDX-License-Identifier: GPL-2.0-or-later
# mk/sim.mk - the discrete-event simulator (sim/: the engine in C; its scenario
# driver is reqsched-sim of tools/, mk/tools.mk) and its tests (test/sim/).
#   make sim         build build/bin/rs-sim against the installed libreqsched
#   make check-sim   PS/heap/rng unit tests + scenario tests (pytest)
SIM_SRCDIR   := $(TOP)/sim
SIM_TESTDIR  := $(TOP)/test/sim
SIM_OBJDIR   := $(BUILD)/sim-obj
SIM_BIN      := $(PREFIX)/bin/rs-sim
SIM_SRCS     := $(wildcard $(SIM_SRCDIR)/*.c)
SIM_HDRS     := $(wildcard $(SIM_SRCDIR)/*.h)
SIM_CORE     := $(SIM_SRCDIR)/link.c $(SIM_SRCDIR)/heap.c $(SIM_SRCDIR)/rng.c
SIM_CFLAGS   := $(WARN_CFLAGS) -O2 -g
SIM_TEST_BIN := $(SIM_OBJDIR)/test_link

.PHONY: sim check-sim
ALL_TARGETS   += sim
CHECK_TARGETS += check-sim

sim: $(SIM_BIN)

$(SIM_BIN): $(SIM_SRCS) $(SIM_HDRS) $(STAMPS)/lib
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) $$(pkg-config --cflags reqsched) -o $@ $(SIM_SRCS) \
		$$(pkg-config --libs reqsched) -Wl,-rpath,$(PREFIX)/lib -lm

$(SIM_TEST_BIN): $(SIM_TESTDIR)/test_link.c $(SIM_CORE) $(SIM_HDRS) | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -I$(SIM_SRCDIR) -o $@ $(SIM_TESTDIR)/test_link.c $(SIM_CORE) -lm

check-sim: $(SIM_BIN) $(SIM_TEST_BIN) $(STAMPS)/tools
	$(SIM_TEST_BIN)
	RS_SIM_ENGINE=$(SIM_BIN) $(PYTHON) -m pytest -q -p no:cacheprovider $(SIM_TESTDIR)
