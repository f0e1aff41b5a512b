# SPDX-License-Identifier: GPL-2.0-or-later
# mk/squid_tls_icap.mk - a second build of the patched Squid with OpenSSL
# (SslBump), the ICAP client and eCAP, for the protocol paths the lean build
# (--without-openssl --disable-icap-client --disable-ecap,
# scripts/squid-build) cannot reach: issue 12, items 7 and 8 (doc/squid.md,
# "Forced tunnels" and "Slots held without using the link"). Same source,
# series and flags as `make squid`, in its own source tree and prefix under
# build/tls-icap/ (the normal build is untouched); not part of `make check`.
# (Named to sort after integration.mk and squid.mk, whose variables it uses.)
#
#   make squid-tls-icap   fetch (cached download), patch, configure
#                         (SQUID_TLS_ICAP=1), build, install
#   make check-protocols  the tests of test/integration/test_tls_icap.py
#                         against it (the normal suite skips them when this
#                         build is absent; README, "Tests")
TLS_ICAP_DIR       := $(BUILD)/tls-icap
TLS_ICAP_SQUID_SRC := $(TLS_ICAP_DIR)/squid-src/squid-$(SQUID_VERSION)
TLS_ICAP_SQUID     := $(TLS_ICAP_DIR)/squid/sbin/squid

.PHONY: squid-tls-icap check-protocols
squid-tls-icap: $(TLS_ICAP_DIR)/stamps/squid

$(TLS_ICAP_DIR)/stamps/squid-source: scripts/fetch-squid scripts/squid-source.sha256 | $(STAMPS)/deps
	@mkdir -p $(@D)
	scripts/fetch-squid $(SQUID_DEB_VERSION) $(TLS_ICAP_DIR)/squid-src
	@touch $@

$(TLS_ICAP_DIR)/stamps/squid: $(TLS_ICAP_DIR)/stamps/squid-source $(SQUID_PATCHES) \
		scripts/squid-build $(STAMPS)/lib-abi
	scripts/squid-build patch $(TLS_ICAP_SQUID_SRC) $(SQUID_PATCH_DIR)
	SQUID_TLS_ICAP=1 scripts/squid-build configure $(TLS_ICAP_SQUID_SRC) $(TLS_ICAP_DIR)/squid
	scripts/squid-build build $(TLS_ICAP_SQUID_SRC)
	@touch $@

check-protocols: $(TLS_ICAP_DIR)/stamps/squid $(STAMPS)/tools
	cd $(INTEGRATION_DIR) && RS_SQUID=$(BUILD)/squid/sbin/squid RS_SQUID_TLS_ICAP=$(TLS_ICAP_SQUID) \
		timeout 900 $(PYTHON) -m pytest -p no:cacheprovider -q -rfEs test_tls_icap.py
