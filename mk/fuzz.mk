# SPDX-License-Identifier: GPL-2.0-or-later
# mk/fuzz.mk - fuzzing of the inputs reqsched takes from outside
# (doc/reliability.md):
#   - the class helper's request stream and its mapping file: libFuzzer
#     targets built with clang, ASan and UBSan (test/fuzz/helper/)
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
FUZZ_CFLAGS  := $(WARN_CFLAGS) -D_POSIX_C_SOURCE=200809L -g -O1 -I$(TOP)/helper \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_HELPER_SRCS := $(filter-out %/main.c,$(wildcard $(TOP)/helper/*.c))
FUZZ_TARGETS := protocol classmap
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 300

.PHONY: check-fuzz fuzz
CHECK_TARGETS += check-fuzz

$(FUZZ_DIR)/fuzz_%: $(FUZZ_SRC)/helper/fuzz_%.c $(FUZZ_HELPER_SRCS) $(wildcard $(TOP)/helper/*.h) \
		$(TOP)/mk/warnings.mk | $(STAMPS)/deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_HELPER_SRCS)

# fuzz-run SECONDS CONFIG-EXECS EXAMPLES: each libFuzzer target for SECONDS
# (new inputs go to build/fuzz/T-new, never into the repo's corpus), the
# configuration fuzzer for SECONDS or CONFIG-EXECS parses, the log parser
# properties with EXAMPLES examples each
define fuzz-run
	for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/$$t-new; \
		echo "fuzz: $$t for $(1) s"; \
		$(FUZZ_DIR)/fuzz_$$t -max_total_time=$(1) -timeout=5 -rss_limit_mb=1024 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$t- \
			$(FUZZ_DIR)/$$t-new $(FUZZ_SRC)/helper/$$t-corpus 2>$(FUZZ_DIR)/$$t.log || \
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
