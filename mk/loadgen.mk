# SPDX-License-Identifier: GPL-2.0-or-later
# mk/loadgen.mk - reqsched-loadc (loadgen/), the C engine of reqsched-load
# sessions|replay --engine c (tools/reqsched_tools/cengine.py, doc/testbed.md
# "Load"), and reqsched-delayline (loadgen/delayline.c), the testbed's
# propagation delay ([link] propagation_rtt_ms).
#   make loadgen   build/bin/reqsched-loadc and reqsched-delayline; everything
#                  that needs the tools ($(STAMPS)/tools: make tools, the
#                  checks, the benchmarks) has them built first
LOADGEN_DIR    := $(TOP)/loadgen
LOADGEN_OBJ    := $(BUILD)/loadgen
LOADGEN_BIN    := $(PREFIX)/bin/reqsched-loadc
LOADGEN_CFLAGS := $(WARN_CFLAGS) -D_POSIX_C_SOURCE=200809L -O2 -g -MMD -MP
LOADGEN_SRCS   := loadc.c conn.c user.c plan.c http.c out.c
LOADGEN_OBJS   := $(addprefix $(LOADGEN_OBJ)/,$(LOADGEN_SRCS:.c=.o))

ALL_TARGETS += loadgen
.PHONY: loadgen
loadgen: $(LOADGEN_BIN)
DELAYLINE_BIN  := $(PREFIX)/bin/reqsched-delayline
loadgen: $(DELAYLINE_BIN)
$(STAMPS)/tools: | $(LOADGEN_BIN) $(DELAYLINE_BIN)

$(LOADGEN_OBJ)/%.o: $(LOADGEN_DIR)/%.c $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(CC) $(LOADGEN_CFLAGS) -c -o $@ $<

$(LOADGEN_BIN): $(LOADGEN_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $^

$(DELAYLINE_BIN): $(LOADGEN_OBJ)/delayline.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ -lnetfilter_queue -lnfnetlink

-include $(LOADGEN_OBJS:.o=.d) $(LOADGEN_OBJ)/delayline.d
