# mk/integration.mk - Squid integration tests (test/integration/, doc/integration.md).
#   make check-integration      the tests listed in test/integration/passing.txt,
#                               against build/squid/sbin/squid (built by `make squid`)
#   make check-integration-all  every integration test (also those not passing yet)
# Tests start Squid and reqsched-origin (tools/) on 127.0.0.1 only; temp dirs live in
# /tmp/rs-integration (RS_KEEP_TMP=1 keeps them for inspection).

INTEGRATION_DIR    := $(TOP)/test/integration
INTEGRATION_PYTEST  = cd $(INTEGRATION_DIR) && RS_SQUID=$(BUILD)/squid/sbin/squid \
                      timeout 900 $(PYTHON) -m pytest -p no:cacheprovider -q -rfEs

.PHONY: check-integration check-integration-all

CHECK_TARGETS += check-integration

check-integration: squid $(STAMPS)/tools
	$(INTEGRATION_PYTEST) $$(sed 's/#.*//' passing.txt)

check-integration-all: squid $(STAMPS)/tools
	$(INTEGRATION_PYTEST) .
