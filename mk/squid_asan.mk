# SPDX-License-Identifier: GPL-2.0-or-later
# mk/squid_asan.mk - the integration suite under AddressSanitizer and
# UndefinedBehaviorSanitizer (not part of `make check`: README, "Tests").
# (Named to sort after lib.mk, integration.mk and squid.mk, whose variables
# its prerequisites use.)
#   make check-asan   build libreqsched and the patched Squid with
#                     -fsanitize=address,undefined into build/asan/ (its own
#                     source tree, objects and prefix: the normal build is
#                     untouched; ccache): libreqsched whole, in Squid the
#                     files the patch series touches (test/asan/cc), run the tests of
#                     test/integration/passing.txt against them, and fail on
#                     any sanitizer report (the runtimes write each one to a
#                     file under build/asan/reports/, whichever process made it)
ASAN_DIR       := $(BUILD)/asan
ASAN_SQUID_SRC := $(ASAN_DIR)/squid-src/squid-$(SQUID_VERSION)
ASAN_REPORTS   := $(ASAN_DIR)/reports
ASAN_FLAGS     := -fsanitize=address,undefined -fno-omit-frame-pointer
# the Squid sources the series touches, absolute paths (test/asan/cc)
ASAN_FILES     := $(ASAN_DIR)/instrumented-files
# Squid's build runs programs it just compiled (cf_gen) and configure runs
# test programs: leaks there are not ours to report.
ASAN_BUILD_ENV := ASAN_OPTIONS=detect_leaks=0 \
                  PKG_CONFIG_PATH=$(ASAN_DIR)/lib/pkgconfig \
                  SQUID_CCACHE=$(TOP)/test/asan/cc RS_ASAN_FILES=$(ASAN_FILES)
# Runtime: every report goes to a file named after its process; the check
# after the suite counts them. Squid's memory pools are off (MEMPOOLS=0 and
# memory_pools off), so freed objects go back to malloc where ASan sees every
# use after free. Two checks are off, for Squid's own code: leaks (Squid does
# not free its configuration at exit: every `squid -k parse` "leaks" its
# ACLs) and new-delete-type-mismatch (Ip::Address::FreeAddr() deletes the
# sockaddr_in6 that getAddrInfo() allocated as a sockaddr; on every start).
# Leaks of reqsched's code are checked by LeakSanitizer in the library's
# randomized test and the libFuzzer targets (doc/reliability.md).
# verify_asan_link_order=0: test_fail_open.py preloads its fault shim (not
# instrumented), which puts it before the ASan runtime in the library list.
ASAN_RUN_ENV   := ASAN_OPTIONS=log_path=$(ASAN_REPORTS)/asan:detect_leaks=0:new_delete_type_mismatch=0:fast_unwind_on_malloc=0:verify_asan_link_order=0 \
                  UBSAN_OPTIONS=log_path=$(ASAN_REPORTS)/ubsan:print_stacktrace=1 \
                  MEMPOOLS=0 RS_SQUID_EXTRA_CONF='memory_pools off'

.PHONY: check-asan
check-asan: $(ASAN_DIR)/stamps/squid $(STAMPS)/tools
	rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS) && chmod 1777 $(ASAN_REPORTS)
	export LD_LIBRARY_PATH=$(ASAN_DIR)/lib; \
	ldd $(ASAN_DIR)/squid/sbin/squid | grep -F '$(ASAN_DIR)/lib/libreqsched.so' | grep -q . || \
	{ echo "check-asan: squid does not load the sanitized libreqsched"; exit 1; }; \
	t0=$$(date +%s); \
	cd $(INTEGRATION_DIR) && $(ASAN_RUN_ENV) RS_SQUID=$(ASAN_DIR)/squid/sbin/squid \
		timeout 3600 $(PYTHON) -m pytest -p no:cacheprovider -q -rfEs \
		$$(sed 's/#.*//' passing.txt); \
	rc=$$?; echo "check-asan: suite took $$(( $$(date +%s) - t0 )) s"; \
	$(TOP)/test/asan/reports $(ASAN_REPORTS) && exit $$rc

$(ASAN_DIR)/stamps/lib: $(STAMPS)/deps $(LIB_SOURCES) $(TOP)/mk/squid_asan.mk
	@mkdir -p $(ASAN_DIR)/lib-obj $(@D)
	cd $(ASAN_DIR)/lib-obj && $(LIB_SRCDIR)/configure --quiet --prefix=$(ASAN_DIR) \
		WARN_CFLAGS="$(WARN_CFLAGS)" CFLAGS="-O1 -g $(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)"
	$(MAKE) -C $(ASAN_DIR)/lib-obj
	$(MAKE) -C $(ASAN_DIR)/lib-obj install >/dev/null
	rm -f $(ASAN_DIR)/lib/libreqsched.la
	@touch $@

$(ASAN_DIR)/stamps/squid-source: scripts/fetch-squid scripts/squid-source.sha256 | $(STAMPS)/deps
	@mkdir -p $(@D)
	scripts/fetch-squid $(SQUID_DEB_VERSION) $(ASAN_DIR)/squid-src
	@touch $@

$(ASAN_DIR)/stamps/squid: $(ASAN_DIR)/stamps/squid-source $(ASAN_DIR)/stamps/lib $(SQUID_PATCHES) \
		scripts/squid-build $(TOP)/test/asan/cc
	scripts/squid-build patch $(ASAN_SQUID_SRC) $(SQUID_PATCH_DIR)
	sed -n 's|^+++ b/\(.*\.cc\?\)$$|$(ASAN_SQUID_SRC)/\1|p' $(SQUID_PATCH_DIR)/*.patch | sort -u >$(ASAN_FILES)
	$(ASAN_BUILD_ENV) scripts/squid-build configure $(ASAN_SQUID_SRC) $(ASAN_DIR)/squid
	$(ASAN_BUILD_ENV) scripts/squid-build build $(ASAN_SQUID_SRC)
	@touch $@
