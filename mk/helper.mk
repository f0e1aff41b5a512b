# SPDX-License-Identifier: GPL-2.0-or-later
# mk/helper.mk - the external class helper ext_reqsched_class_acl (helper/),
# its Check unit tests and end-to-end tests (test/helper/), its benchmark.
#   make helper        build and install build/bin/ext_reqsched_class_acl
#   make check-helper  unit tests, stdin/stdout end-to-end test, and with the
#                      patched Squid (make squid): squid -k parse of every
#                      squid-conf/ snippet and the helper-through-Squid test
#   make bench-helper  load time of 100,000 entries, ns per lookup

HELPER_DIR    := $(TOP)/helper
HELPER_TDIR   := $(TOP)/test/helper
HELPER_OBJ    := $(BUILD)/helper
HELPER_BIN    := $(PREFIX)/bin/ext_reqsched_class_acl
HELPER_CFLAGS := $(WARN_CFLAGS) -D_POSIX_C_SOURCE=200809L -O2 -g -MMD -MP

HELPER_LIB_SRCS := addr.c prefix_table.c str_table.c escape.c msglog.c classmap.c \
                   protocol.c linereader.c watch.c
HELPER_LIB_OBJS := $(addprefix $(HELPER_OBJ)/,$(HELPER_LIB_SRCS:.c=.o))
HELPER_LIB      := $(HELPER_OBJ)/libclassacl.a

HELPER_CHECK_BIN := $(HELPER_OBJ)/check_helper
HELPER_BENCH_BIN := $(HELPER_OBJ)/bench_helper

ALL_TARGETS   += helper
CHECK_TARGETS += check-helper
BENCH_TARGETS += bench-helper

.PHONY: helper check-helper bench-helper

helper: $(HELPER_BIN)

$(HELPER_OBJ)/%.o: $(HELPER_DIR)/%.c $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(CC) $(HELPER_CFLAGS) -c -o $@ $<

$(HELPER_OBJ)/test_%.o: $(HELPER_TDIR)/%.c $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(CC) $(HELPER_CFLAGS) -I$(HELPER_DIR) $$(pkg-config --cflags check) -c -o $@ $<

$(HELPER_LIB): $(HELPER_LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(HELPER_BIN): $(HELPER_OBJ)/main.o $(HELPER_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^

$(HELPER_CHECK_BIN): $(HELPER_OBJ)/test_check_helper.o $(HELPER_LIB)
	$(CC) -o $@ $^ $$(pkg-config --libs check)

$(HELPER_BENCH_BIN): $(HELPER_OBJ)/test_bench_helper.o $(HELPER_LIB)
	$(CC) -o $@ $^

check-helper: $(HELPER_BIN) $(HELPER_CHECK_BIN) $(STAMPS)/squid $(STAMPS)/tools
	CK_DEFAULT_TIMEOUT=60 $(HELPER_CHECK_BIN)
	$(HELPER_TDIR)/e2e.sh $(HELPER_BIN)
	$(HELPER_TDIR)/conf-parse.sh $(PREFIX)/squid/sbin/squid $(HELPER_BIN)
	$(HELPER_TDIR)/squid-e2e.sh $(PREFIX)/squid/sbin/squid $(HELPER_BIN)

bench-helper: $(HELPER_BIN) $(HELPER_BENCH_BIN)
	$(HELPER_BENCH_BIN)
	$(HELPER_TDIR)/bench-pipe.sh $(HELPER_BIN)

-include $(HELPER_LIB_OBJS:.o=.d) $(HELPER_OBJ)/main.d \
         $(HELPER_OBJ)/test_check_helper.d $(HELPER_OBJ)/test_bench_helper.d
