# SPDX-License-Identifier: GPL-2.0-or-later
# mk/loadgen.mk - reqsched-loadc (loadgen/), the C engine of reqsched-load
# sessions|replay --engine c (tools/reqsched_tools/cengine.py, doc/testbed.md
# "Load").
#   make loadgen   build/bin/reqsched-loadc; everything that needs the tools
#                  ($(STAMPS)/tools: make tools, the checks, the benchmarks)
#                  has it built first
LOADGEN_DIR    := $(TOP)/loadgen
LOADGEN_OBJ    := $(BUILD)/loadgen
LOADGEN_BIN    := $(PREFIX)/bin/reqsched-loadc
LOADGEN_CFLAGS := $(WARN_CFLAGS) -D_POSIX_C_SOURCE=200809L -O2 -g -MMD -MP
LOADGEN_SRCS   := loadc.c conn.c user.c plan.c http.c out.c
LOADGEN_OBJS   := $(addprefix $(LOADGEN_OBJ)/,$(LOADGEN_SRCS:.c=.o))

ALL_TARGETS += loadgen
.PHONY: loadgen
loadgen: $(LOADGEN_BIN)
$(STAMPS)/tools: | $(LOADGEN_BIN)

$(LOADGEN_OBJ)/%.o: $(LOADGEN_DIR)/%.c $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(CC) $(LOADGEN_CFLAGS) -c -o $@ $<

$(LOADGEN_BIN): $(LOADGEN_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $^

-include $(LOADGEN_OBJS:.o=.d)
