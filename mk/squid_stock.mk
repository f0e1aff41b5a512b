# SPDX-License-Identifier: GPL-2.0-or-later
# mk/squid_stock.mk - stock Squid for the overhead benchmark (issue "Scale and
# cost", item 2): the same Debian source package as the patched Squid, Debian's
# patches applied and ours not, configured with the same options and flags
# less --enable-request-scheduler (scripts/squid-build, SQUID_STOCK=1), in its
# own tree and prefix under build/stock/. Not part of `make check`.
# (Named to sort after squid.mk, whose variables it uses.)
#
#   make squid-stock   fetch (cached download), configure, build, install
#   make bench-squid   stock vs patched Squid on loopback with nginx and wrk
#                      (test/squid/bench_overhead.py; README, "The two commands")
#   make bench-squid-instructions  the same builds under callgrind: instructions
#                      per request, exact and independent of the machine's load
STOCK_DIR       := $(BUILD)/stock
STOCK_SQUID_SRC := $(STOCK_DIR)/squid-src/squid-$(SQUID_VERSION)
STOCK_SQUID     := $(STOCK_DIR)/squid/sbin/squid

BENCH_TARGETS += bench-squid bench-squid-instructions

.PHONY: squid-stock bench-squid bench-squid-instructions
squid-stock: $(STAMPS)/squid-stock

$(STAMPS)/squid-stock: scripts/fetch-squid scripts/squid-build | $(STAMPS)/deps
	@mkdir -p $(STAMPS)
	[ -d $(STOCK_SQUID_SRC) ] || scripts/fetch-squid $(SQUID_DEB_VERSION) $(STOCK_DIR)/squid-src
	SQUID_STOCK=1 scripts/squid-build configure $(STOCK_SQUID_SRC) $(STOCK_DIR)/squid
	scripts/squid-build build $(STOCK_SQUID_SRC)
	@touch $@

bench-squid: $(STAMPS)/squid $(STAMPS)/squid-stock $(STAMPS)/tools
	$(PYTHON) $(TOP)/test/squid/bench_overhead.py --stock $(STOCK_SQUID) \
		--patched $(SQUID_PREFIX)/sbin/squid

bench-squid-instructions: $(STAMPS)/squid $(STAMPS)/squid-stock $(STAMPS)/tools
	$(PYTHON) $(TOP)/test/squid/bench_overhead.py --instructions --stock $(STOCK_SQUID) \
		--patched $(SQUID_PREFIX)/sbin/squid
