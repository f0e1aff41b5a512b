# mk/integration.mk - Squid integration tests (test/integration/, doc/integration.md).
#   make check-integration      the tests listed in test/integration/passing.txt,
#                               against build/squid/sbin/squid (built by `make squid`)
#   make check-integration-all  every integration test (also those not passing yet)
#   make check-integration-debug  the tests of passing.txt again, with Squid
#                               loading the RS_DEBUG libreqsched (build/lib-debug/)
# Tests start Squid and scripts/origin on 127.0.0.1 only; temp dirs live in
# /tmp/rs-integration (RS_KEEP_TMP=1 keeps them for inspection).

INTEGRATION_DIR    := $(TOP)/test/integration
INTEGRATION_PYTEST := cd $(INTEGRATION_DIR) && RS_SQUID=$(BUILD)/squid/sbin/squid \
                      timeout 900 python3 -m pytest -p no:cacheprovider -q -rfEs

.PHONY: check-integration check-integration-all check-integration-debug

CHECK_TARGETS += check-integration check-integration-debug

check-integration: squid $(STAMPS)/deps
	$(INTEGRATION_PYTEST) $$(sed 's/#.*//' passing.txt)

check-integration-all: squid $(STAMPS)/deps
	$(INTEGRATION_PYTEST) .

# The RS_DEBUG library checks the core's invariants after every public
# operation and aborts naming the broken one; Squid runs with -N, so an
# abort fails the test. Squid links libreqsched shared: LD_LIBRARY_PATH
# chooses the debug build unless the binary carries a DT_RPATH (searched
# before LD_LIBRARY_PATH; DT_RUNPATH is searched after it), so ldd proves
# which library Squid loads before the suite runs.
check-integration-debug: squid $(STAMPS)/lib-debug $(STAMPS)/deps
	export LD_LIBRARY_PATH=$(LIB_DEBUG_PREFIX)/lib; \
	ldd $(BUILD)/squid/sbin/squid | grep -F '$(LIB_DEBUG_PREFIX)/lib/libreqsched.so' || \
	{ echo "check-integration-debug: squid does not load the RS_DEBUG libreqsched"; exit 1; }; \
	$(INTEGRATION_PYTEST) $$(sed 's/#.*//' passing.txt)
