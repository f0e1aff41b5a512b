# SPDX-License-Identifier: GPL-2.0-or-later
# mk/testbed.mk - the namespace testbed, log replay, report and origin server
# (reqsched-testbed, -replay, -report, -origin of tools/, mk/tools.mk; doc/testbed.md).
#   make check-scripts   pyflakes over every Python file of the repository (a stale import
#                        fails here in seconds, not at integration's collection), mypy over
#                        tools/reqsched_tools, then the pytest unit tests of tools/
#                        (test/tools/): report maths, parsers, scenarios, origin
#   make check-testbed   the three checks below (~9 min)
#   make check-testbed-admission  a short (~2 min) field-trial-shaped run (8 Mbit/s, see
#                        test/testbed/check-field-trial.toml): msf/nopacing vs stock
#   make check-testbed-pacing  the byte layer (~5.5 min): bufferbloat at 1000 ms,
#                        cross traffic at 60% of C, msf (pacing) vs stock, targets
#                        asserted, and a restart under load (msf alone: the link
#                        refilled); FAILS on a Squid without request_sched_pacing
#   make check-testbed-gateway  the website-gateway scenario (~80 s): nqos vs mqos,
#                        every resource split 6:3:1 under mqos, not under nqos
#   make demo            field-trial in every mode (~5 min): table, JSON, PNGs in
#                        results/field-trial-<timestamp>/
#   make demo-replay     the log-replay scenario (5.4 min measured): the sample access log
#                        (tools/reqsched_tools/scenarios/sample-access.log) replayed
#                        faithfully by reqsched-load, stock vs msf
#   make bench-testbed   origin server throughput (paced and unpaced), then the load
#                        generator against nginx (test/testbed/bench_load.py, 9 min 9 s
#                        measured before its C engine rows, which add about 3 min: wrk's
#                        ceiling; the C engine on one core, over 2 processes and with
#                        10,000 think-time users; the Python engine's transactions/s with
#                        backlogged users on one core, over --procs 1/2/4 and by Tsung;
#                        think-time users on their own addresses up to 10,000, over 2
#                        processes and by Tsung; then wrk and the C engine (200 backlogged,
#                        5,000 think-time users) through the patched Squid, 1.5 min more)

TESTBED        := $(PREFIX)/bin/reqsched-testbed
TESTBED_PYTEST  = $(PYTHON) -m pytest -p no:cacheprovider -q
# make demo: 8 modes x DEMO_DURATION s (+ ~6 s start/stop each): 5 min 47 s on 2026-11-25
DEMO_DURATION  ?= 36
DEMO_WARMUP    ?= 10
DEMO_INTERVAL  ?= 2
# msf, rfq, ... run the byte layer (pacing); /nopacing is the admission layer alone
DEMO_MODES     ?= stock,delay-pools,htb,msf/nopacing,msf,rfq,drr,msf+sff

CHECK_TARGETS += check-scripts check-testbed
BENCH_TARGETS += bench-testbed

.PHONY: check-scripts check-testbed check-testbed-admission check-testbed-pacing \
	check-testbed-gateway demo \
	demo-replay bench-testbed

check-scripts: $(STAMPS)/tools
	cd $(TOP) && $(PYTHON) -m pyflakes tools test
	cd $(TOP) && $(PYTHON) -m mypy tools/reqsched_tools
	cd $(TOP) && $(TESTBED_PYTEST) test/tools

check-testbed: squid $(STAMPS)/tools
	cd $(TOP) && $(TESTBED_PYTEST) -s test/testbed

check-testbed-admission: squid $(STAMPS)/tools
	cd $(TOP) && $(TESTBED_PYTEST) -s test/testbed/test_testbed.py

check-testbed-pacing: squid $(STAMPS)/tools
	cd $(TOP) && $(TESTBED_PYTEST) -s test/testbed/test_byte_layer.py

check-testbed-gateway: squid $(STAMPS)/tools
	cd $(TOP) && $(TESTBED_PYTEST) -s test/testbed/test_website_gateway.py

demo: all
	$(TESTBED) run --scenario field-trial --modes $(DEMO_MODES) --duration $(DEMO_DURATION) \
	    --warmup $(DEMO_WARMUP) --update-interval $(DEMO_INTERVAL)

demo-replay: all
	$(TESTBED) run --scenario log-replay

bench-testbed: squid $(STAMPS)/tools
	$(PYTHON) $(TOP)/test/testbed/bench_origin.py
	$(PYTHON) $(TOP)/test/testbed/bench_load.py
