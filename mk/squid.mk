# SPDX-License-Identifier: GPL-2.0-or-later
# Patched Squid: Debian's squid 6.13-2+deb13u3 source package (Debian's own
# patches applied) + our quilt series patches/squid-6.13/series, configured
# with --enable-request-scheduler against libreqsched (pkg-config, via the
# exported PKG_CONFIG_PATH) and installed into build/squid/.
#
#   make squid        fetch, patch, bootstrap/configure when needed, build, install
#   make check-squid  build and run Squid's unit tests that compile hooked files
#                     and the ReqSched module's unit tests (patch 14)
#
# Stamps: the source is fetched once; a changed patch or series re-applies the
# series (quilt pop -f/push) and rebuilds incrementally (make's dependency
# tracking + ccache); bootstrap.sh/configure only re-run when configure.ac/
# Makefile.am or the configure options change; Squid links the shared
# libreqsched, so only a changed libreqsched.h ($(STAMPS)/lib-abi) rebuilds it.
SQUID_VERSION     := 6.13
SQUID_DEB_VERSION := 6.13-2+deb13u3
SQUID_SRC         := $(BUILD)/squid-src/squid-$(SQUID_VERSION)
SQUID_PREFIX      := $(BUILD)/squid
SQUID_PATCH_DIR   := $(TOP)/patches/squid-$(SQUID_VERSION)
SQUID_PATCHES     := $(SQUID_PATCH_DIR)/series $(wildcard $(SQUID_PATCH_DIR)/*.patch)

ALL_TARGETS   += squid
CHECK_TARGETS += check-squid

.PHONY: squid check-squid
squid: $(STAMPS)/squid

$(STAMPS)/squid-source: scripts/fetch-squid scripts/squid-source.sha256 | $(STAMPS)/deps
	@mkdir -p $(STAMPS)
	scripts/fetch-squid $(SQUID_DEB_VERSION) $(BUILD)/squid-src
	@touch $@

$(STAMPS)/squid-patched: $(STAMPS)/squid-source $(SQUID_PATCHES)
	scripts/squid-build patch $(SQUID_SRC) $(SQUID_PATCH_DIR)
	@touch $@

$(STAMPS)/squid-configured: $(STAMPS)/squid-patched scripts/squid-build $(STAMPS)/lib-abi
	scripts/squid-build configure $(SQUID_SRC) $(SQUID_PREFIX)
	@touch $@

$(STAMPS)/squid: $(STAMPS)/squid-configured $(STAMPS)/lib-abi
	scripts/squid-build build $(SQUID_SRC)
	@touch $@

# the module's unit tests run against the installed libreqsched (found
# through the exported LD_LIBRARY_PATH): run them again when it changes
check-squid: $(STAMPS)/squid-check
$(STAMPS)/squid-check: $(STAMPS)/squid $(STAMPS)/lib
	scripts/squid-build check $(SQUID_SRC)
	@touch $@
