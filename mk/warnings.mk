# SPDX-License-Identifier: GPL-2.0-or-later
# mk/warnings.mk - the one set of warning flags for all C of the tree:
# lib/ (passed to its configure as WARN_CFLAGS), helper/, the simulator and
# the tests (test/lib/Makefile includes this file too). Included first by
# the top-level Makefile.
WARN_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
               -Wmissing-prototypes -Wold-style-definition -Wpointer-arith \
               -Wundef -Wformat=2 -Wvla -Wwrite-strings
