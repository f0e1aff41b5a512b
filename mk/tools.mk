# SPDX-License-Identifier: GPL-2.0-or-later
# mk/tools.mk - the Python package tools/ (reqsched_tools: testbed, replay,
# report, origin, simulator driver), installed editable into a venv under
# build/ (Debian 12 forbids pip into the system Python, PEP 668). The venv sees
# the system's site-packages (matplotlib, pytest: mk/python-packages.txt).
#   make tools   build/venv with the package; its commands linked into build/bin
# Every Python test and tool run uses $(PYTHON), the venv's interpreter (other
# fragments are included before this one: they expand it in recipes or with =).
TOOLS_DIR     := $(TOP)/tools
TOOLS_VENV    := $(BUILD)/venv
PYTHON        := $(TOOLS_VENV)/bin/python3
TOOLS_SCRIPTS := reqsched-testbed reqsched-replay reqsched-report reqsched-origin reqsched-sim \
                 reqsched-load \
                 reqsched-prober reqsched-monitor reqsched-siteorigin reqsched-siteload \
                 reqsched-from-delay-pools

ALL_TARGETS += tools
.PHONY: tools
tools: $(STAMPS)/tools

$(STAMPS)/tools: $(TOOLS_DIR)/pyproject.toml | $(STAMPS)/deps
	rm -rf $(TOOLS_VENV)
	python3 -m venv --system-site-packages $(TOOLS_VENV)
	$(PYTHON) -m pip install -q --no-build-isolation --no-deps -e $(TOOLS_DIR)
	@mkdir -p $(PREFIX)/bin
	for s in $(TOOLS_SCRIPTS); do ln -sf ../venv/bin/$$s $(PREFIX)/bin/$$s; done
	@touch $@
