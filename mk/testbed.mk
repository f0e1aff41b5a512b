# mk/testbed.mk - the namespace testbed, log replay, report and origin server
# (scripts/testbed, scripts/replay, scripts/report, scripts/origin; doc/testbed.md).
#   make check-scripts   pytest unit tests: report maths, log parsers, scenarios, origin
#   make check-testbed   a short (~2 min) field-trial-shaped run (8 Mbit/s, see
#                        test/testbed/check-field-trial.toml): msf vs stock, asserted
#   make demo            field-trial in every mode (~5 min): table, JSON, PNGs in
#                        results/field-trial-<timestamp>/
#   make bench-testbed   origin server throughput (paced and unpaced)

TESTBED        := $(TOP)/scripts/testbed
TESTBED_PYTEST := python3 -m pytest -p no:cacheprovider -q
# make demo: 7 modes x DEMO_DURATION s (+ ~6 s start/stop each) ~ 5 minutes
DEMO_DURATION  ?= 36
DEMO_WARMUP    ?= 10
DEMO_INTERVAL  ?= 2
DEMO_MODES     ?= stock,delay-pools,htb,msf,rfq,drr,msf+sff

CHECK_TARGETS += check-scripts check-testbed
BENCH_TARGETS += bench-testbed

.PHONY: check-scripts check-testbed demo bench-testbed

check-scripts: $(STAMPS)/deps
	cd $(TOP) && $(TESTBED_PYTEST) test/scripts

check-testbed: squid $(STAMPS)/deps
	cd $(TOP) && $(TESTBED_PYTEST) -s test/testbed

demo: all
	$(TESTBED) run --scenario field-trial --modes $(DEMO_MODES) --duration $(DEMO_DURATION) \
	    --warmup $(DEMO_WARMUP) --update-interval $(DEMO_INTERVAL)

bench-testbed: $(STAMPS)/deps
	python3 $(TOP)/test/testbed/bench_origin.py
