# SPDX-License-Identifier: GPL-2.0-or-later
# mk/fuzz.mk - fuzzing of the inputs reqsched takes from outside
# (doc/reliability.md):
#   - the class helper's request stream and its mapping file, and the load
#     engine's plan lines and HTTP responses (reqsched-loadc): libFuzzer
#     targets built with clang, ASan and UBSan (test/fuzz/helper/,
#     test/fuzz/loadgen/)
#   - the request_sched_* directives: random mutations of good
#     configurations through `squid -k parse` of the patched Squid
#     (test/fuzz/fuzz_config.py)
#   - the access-log parsers of the replay tool: Hypothesis properties
#     (test/fuzz/test_logparse_fuzz.py)
# Each starts from the corpus in the repo (test/fuzz/...); every input there
# is run first, so a finding saved into the corpus stays a regression test.
#   make check-fuzz   a short bounded run of each (part of make check)
#   make fuzz         the long run (FUZZ_SECONDS per target, default 300)
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SRC     := $(TOP)/test/fuzz
FUZZ_CC      := clang-14
FUZZ_CFLAGS  := $(WARN_CFLAGS) -D_POSIX_C_SOURCE=200809L -g -O1 \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_HELPER_SRCS  := $(filter-out %/main.c,$(wildcard $(TOP)/helper/*.c))
FUZZ_LOADGEN_SRCS := $(TOP)/loadgen/plan.c $(TOP)/loadgen/http.c
# DIR/NAME: test/fuzz/DIR/fuzz_NAME.c, its corpus test/fuzz/DIR/NAME-corpus
FUZZ_TARGETS := helper/protocol helper/classmap loadgen/plan loadgen/response
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(notdir $(FUZZ_TARGETS)))
FUZZ_SECONDS ?= 300

.PHONY: check-fuzz fuzz
CHECK_TARGETS += check-fuzz

$(FUZZ_DIR)/fuzz_protocol $(FUZZ_DIR)/fuzz_classmap: $(FUZZ_DIR)/fuzz_%: $(FUZZ_SRC)/helper/fuzz_%.c \
		$(FUZZ_HELPER_SRCS) $(wildcard $(TOP)/helper/*.h) $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(TOP)/helper -o $@ $< $(FUZZ_HELPER_SRCS)

$(FUZZ_DIR)/fuzz_plan $(FUZZ_DIR)/fuzz_response: $(FUZZ_DIR)/fuzz_%: $(FUZZ_SRC)/loadgen/fuzz_%.c \
		$(FUZZ_LOADGEN_SRCS) $(wildcard $(TOP)/loadgen/*.h) $(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(TOP)/loadgen -o $@ $< $(FUZZ_LOADGEN_SRCS) -lm

# fuzz-run SECONDS CONFIG-EXECS EXAMPLES: each libFuzzer target for SECONDS
# (new inputs go to build/fuzz/T-new, never into the repo's corpus), the
# configuration fuzzer for SECONDS or CONFIG-EXECS parses, the log parser
# properties with EXAMPLES examples each
define fuzz-run
	for dt in $(FUZZ_TARGETS); do \
		t=$${dt#*/}; \
		mkdir -p $(FUZZ_DIR)/$$t-new; \
		echo "fuzz: $$t for $(1) s"; \
		$(FUZZ_DIR)/fuzz_$$t -max_total_time=$(1) -timeout=5 -rss_limit_mb=1024 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$t- \
			$(FUZZ_DIR)/$$t-new $(FUZZ_SRC)/$$dt-corpus 2>$(FUZZ_DIR)/$$t.log || \
			{ tail -40 $(FUZZ_DIR)/$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' $(FUZZ_DIR)/$$t.log; \
	done
	$(PYTHON) $(FUZZ_SRC)/fuzz_config.py --squid $(BUILD)/squid/sbin/squid \
		--corpus $(FUZZ_SRC)/config-corpus --out $(FUZZ_DIR)/config \
		--seconds $(1) --max-execs $(2)
	cd $(TOP) && RS_HYPOTHESIS_EXAMPLES=$(3) $(PYTHON) -m pytest -p no:cacheprovider -q \
		$(FUZZ_SRC)/test_logparse_fuzz.py
endef

check-fuzz: $(FUZZ_BINS) $(STAMPS)/squid $(STAMPS)/tools
	$(call fuzz-run,3,60,100)

fuzz: $(FUZZ_BINS) $(STAMPS)/squid $(STAMPS)/tools
	$(call fuzz-run,$(FUZZ_SECONDS),1000000,3000)
