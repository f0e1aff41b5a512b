# SPDX-License-Identifier: GPL-2.0-or-later
# mk/integration.mk - Squid integration tests (test/integration/, doc/integration.md).
#   make check-integration      the tests listed in test/integration/passing.txt,
#                               against build/squid/sbin/squid (built by `make squid`)
#   make check-integration-all  every integration test (also those not passing yet)
#   make check-integration-debug  the tests of passing.txt again, with Squid
#                               loading the RS_DEBUG libreqsched (build/lib-debug/)
#   make soak                   test_soak.py::test_soak_no_leak at length, not in
#                               make check: SOAK_REQUESTS (250,000) through Squid
#                               with the scheduler, then the same with it off (the
#                               RSS baseline); 10.5 min measured (README)
# Tests start Squid and reqsched-origin (tools/) on 127.0.0.1 only; temp dirs live in
# /tmp/rs-integration (RS_KEEP_TMP=1 keeps them for inspection). Two pytest-xdist
# workers, one test file each at a time (--dist loadfile: a file's module fixtures
# stay in one process): most tests wait on sockets and timers, so the suite takes
# 7 minutes instead of 12.5 on the 2-core machine. timeout: a bound on a hung run.

INTEGRATION_DIR    := $(TOP)/test/integration
INTEGRATION_PYTEST  = cd $(INTEGRATION_DIR) && RS_SQUID=$(BUILD)/squid/sbin/squid \
                      timeout 1800 $(PYTHON) -m pytest -p no:cacheprovider -q -rfEs \
                      -n 2 --dist loadfile

.PHONY: check-integration check-integration-all check-integration-debug soak

CHECK_TARGETS += check-integration check-integration-debug

check-integration: squid $(STAMPS)/tools
	$(INTEGRATION_PYTEST) $$(sed 's/#.*//' passing.txt)

check-integration-all: squid $(STAMPS)/tools
	$(INTEGRATION_PYTEST) .

# The RS_DEBUG library checks the core's invariants after every public
# operation and aborts naming the broken one; Squid runs with -N, so an
# abort fails the test. Squid links libreqsched shared without an rpath:
# LD_LIBRARY_PATH chooses the library (the harness appends build/lib after
# the caller's path, reqsched_tools.paths.use_build_lib()), and ldd proves
# which one Squid loads before the suite runs.
check-integration-debug: squid $(STAMPS)/lib-debug $(STAMPS)/tools
	export LD_LIBRARY_PATH=$(LIB_DEBUG_PREFIX)/lib; \
	ldd $(BUILD)/squid/sbin/squid | grep -F '$(LIB_DEBUG_PREFIX)/lib/libreqsched.so' || \
	{ echo "check-integration-debug: squid does not load the RS_DEBUG libreqsched"; exit 1; }; \
	$(INTEGRATION_PYTEST) $$(sed 's/#.*//' passing.txt)

SOAK_REQUESTS ?= 250000
soak: squid $(STAMPS)/tools
	cd $(INTEGRATION_DIR) && RS_SQUID=$(BUILD)/squid/sbin/squid RS_SOAK_REQUESTS=$(SOAK_REQUESTS) \
		RS_SOAK_MAX_S=$$(( $(SOAK_REQUESTS) / 50 + 600 )) \
		timeout $$(( $(SOAK_REQUESTS) / 20 + 1800 )) $(PYTHON) -m pytest -p no:cacheprovider -q -rfEs -s \
		test_soak.py -k test_soak_no_leak
