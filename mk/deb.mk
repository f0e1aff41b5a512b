# SPDX-License-Identifier: GPL-2.0-or-later
# mk/deb.mk - Debian packages (scripts/build-deb, test/deb/, doc/debian.md).
# Not part of make check: building Debian's squid takes about an hour on 2 cores.
#   make deps-deb   packaging tools (mk/apt-packages-deb.txt) and the Build-Depends
#                   of Debian's squid source (needs root or sudo)
#   make deb        build/deb/reqsched/: libreqsched0, libreqsched-dev,
#                   squid-reqsched-helper (debian/ of this repository);
#                   build/deb/squid/: squid, squid-openssl, squid-common, ...
#                   6.13-2+reqsched1 (Debian's source + our series); installs the
#                   just-built libreqsched0/-dev (squid's Build-Depends) with dpkg -i
#   make check-deb  deps-deb, deb, then test/deb/install-test.sh: the packages
#                   installed into a throwaway mmdebstrap root, squid -k parse of
#                   squid-conf/ and the helper started there

DEB_OUT := $(BUILD)/deb
# (this file is included before lib.mk and squid.mk: its own file lists)
DEB_REQSCHED_INPUTS := scripts/build-deb $(wildcard debian/* debian/source/* \
                       lib/*.[ch] lib/*/*.[ch] lib/*.am lib/*.ac lib/*.in \
                       helper/*.[ch] squid-conf/*) doc/helper.md doc/lib.md LICENSE
DEB_SQUID_INPUTS    := $(wildcard patches/squid-*/* patches/debian-squid/*) \
                       scripts/build-deb scripts/fetch-squid scripts/squid-source.sha256

.PHONY: deps-deb deb check-deb

deps-deb: deps
	scripts/build-deb deps $(DEB_OUT)
	@mkdir -p $(STAMPS) && touch $(STAMPS)/deps-deb

$(STAMPS)/deps-deb: scripts/build-deb mk/apt-packages-deb.txt | $(STAMPS)/deps
	@scripts/build-deb check-deps $(DEB_OUT)
	@mkdir -p $(STAMPS) && touch $@
ifneq ($(filter check-deb,$(MAKECMDGOALS)),)
$(STAMPS)/deps-deb: | deps-deb
endif

deb: $(STAMPS)/deb-squid

$(STAMPS)/deb-reqsched: $(DEB_REQSCHED_INPUTS) | $(STAMPS)/deps-deb
	scripts/build-deb reqsched $(DEB_OUT)
	@touch $@

$(STAMPS)/deb-squid: $(STAMPS)/deb-reqsched $(DEB_SQUID_INPUTS)
	scripts/build-deb squid $(DEB_OUT)
	@touch $@

check-deb: deps-deb $(STAMPS)/deb-squid
	test/deb/install-test.sh $(DEB_OUT)
