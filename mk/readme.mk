# SPDX-License-Identifier: GPL-2.0-or-later
# mk/readme.mk - the README's commands and configuration examples stay true
# (test/readme/test_readme.py).
.PHONY: check-readme
CHECK_TARGETS += check-readme

check-readme: $(STAMPS)/squid helper sim $(STAMPS)/tools
	cd $(TOP) && $(PYTHON) -m pytest -p no:cacheprovider -q test/readme
