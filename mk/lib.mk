# SPDX-License-Identifier: GPL-2.0-or-later
# libreqsched (lib/): autotools + libtool build installed into $(PREFIX),
# Check unit tests and the ASan/UBSan randomized invariant test (test/lib/),
# and the core benchmark.
#   make lib         build and install build/lib/libreqsched.{so,a},
#                    build/include/reqsched.h, build/lib/pkgconfig/reqsched.pc
#   make check-lib   unit tests + randomized invariant test + no call cycle
#                    between the files of lib/
#   make check-lib-debug  the randomized test against the RS_DEBUG build
#                    (every public operation checks the core's invariants)
#   make lib-debug   the RS_DEBUG build installed into build/lib-debug/
#                    (Squid runs against it with LD_LIBRARY_PATH: integration.mk)
#   make bench-lib   ns per request and bytes per queued request
LIB_SRCDIR  := $(TOP)/lib
LIB_OBJDIR  := $(BUILD)/lib-obj
LIB_DEBUG_OBJDIR := $(BUILD)/lib-debug-obj
LIB_DEBUG_PREFIX := $(BUILD)/lib-debug
LIB_TESTOUT := $(BUILD)/test-lib
LIB_SOURCES := $(wildcard $(LIB_SRCDIR)/*.c $(LIB_SRCDIR)/*.h) \
               $(LIB_SRCDIR)/configure.ac $(LIB_SRCDIR)/Makefile.am \
               $(LIB_SRCDIR)/reqsched.pc.in
LIB_TEST_MAKE = $(MAKE) --no-print-directory -C $(TOP)/test/lib \
                PREFIX=$(PREFIX) LIBSRC=$(LIB_SRCDIR) OUT=$(LIB_TESTOUT)

.PHONY: lib lib-debug check-lib check-lib-debug bench-lib
ALL_TARGETS   += lib
CHECK_TARGETS += check-lib check-lib-debug
BENCH_TARGETS += bench-lib

lib: $(STAMPS)/lib $(STAMPS)/lib-abi

$(LIB_SRCDIR)/configure: $(LIB_SRCDIR)/configure.ac $(LIB_SRCDIR)/Makefile.am | $(STAMPS)/deps
	cd $(LIB_SRCDIR) && mkdir -p m4 && autoreconf -fi
	@touch $@

$(LIB_OBJDIR)/Makefile: $(LIB_SRCDIR)/configure $(LIB_SRCDIR)/reqsched.pc.in $(TOP)/mk/warnings.mk
	@mkdir -p $(LIB_OBJDIR)
	cd $(LIB_OBJDIR) && $(LIB_SRCDIR)/configure --quiet --prefix=$(PREFIX) \
		WARN_CFLAGS="$(WARN_CFLAGS)"

$(LIB_DEBUG_OBJDIR)/Makefile: $(LIB_SRCDIR)/configure $(LIB_SRCDIR)/reqsched.pc.in $(TOP)/mk/warnings.mk
	@mkdir -p $(LIB_DEBUG_OBJDIR)
	cd $(LIB_DEBUG_OBJDIR) && $(LIB_SRCDIR)/configure --quiet \
		--prefix=$(LIB_DEBUG_PREFIX) WARN_CFLAGS="$(WARN_CFLAGS)" \
		CFLAGS="-O1 -g -DRS_DEBUG"

$(STAMPS)/lib: $(STAMPS)/deps $(LIB_OBJDIR)/Makefile $(LIB_SOURCES)
	$(MAKE) -C $(LIB_OBJDIR)
	$(MAKE) -C $(LIB_OBJDIR) install >/dev/null
	@# no libtool archive (as Debian installs it): libtool would hardcode an
	@# rpath to build/lib into whatever links it (Squid); programs started
	@# by make find the library through the exported LD_LIBRARY_PATH
	rm -f $(PREFIX)/lib/libreqsched.la
	@mkdir -p $(STAMPS)
	@touch $@

# $(STAMPS)/lib-abi changes only when the installed header changes: a
# dependent that links the shared library (Squid) can depend on it instead
# of $(STAMPS)/lib and skip rebuilds for library-internal changes.
$(STAMPS)/lib-abi: $(STAMPS)/lib
	@if ! cmp -s $(PREFIX)/include/reqsched.h $(STAMPS)/lib-abi.h; then \
		cp $(PREFIX)/include/reqsched.h $(STAMPS)/lib-abi.h; touch $@; fi

lib-debug: $(STAMPS)/lib-debug

$(STAMPS)/lib-debug: $(STAMPS)/deps $(LIB_DEBUG_OBJDIR)/Makefile $(LIB_SOURCES)
	$(MAKE) -C $(LIB_DEBUG_OBJDIR)
	$(MAKE) -C $(LIB_DEBUG_OBJDIR) install >/dev/null
	@mkdir -p $(STAMPS)
	@touch $@

check-lib: $(STAMPS)/lib
	$(LIB_TEST_MAKE) check

check-lib-debug: $(STAMPS)/lib-debug
	$(LIB_TEST_MAKE) random-debug

bench-lib: $(STAMPS)/lib
	$(LIB_TEST_MAKE) bench
