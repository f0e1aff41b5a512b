/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ecap_hold.cc - an eCAP RESPMOD adapter for test_tls_icap.py that holds
 * each response and then passes it on unchanged (libecap 1.0):
 *
 *   loadable_modules .../ecap_hold.so
 *   ecap_service svc respmod_precache uri=ecap://reqsched.test/hold hold=4 from=body
 *
 * from=body (default): the adapter takes the whole virgin body as it
 * arrives and answers `hold` seconds after its end.
 * from=headers: the adapter takes nothing of the virgin body for `hold`
 * seconds after the headers (Squid's virgin body pipe fills and Squid
 * stops reading the origin), then streams it.
 *
 * The hold is asynchronous: the service makes async transactions, Squid's
 * main loop calls Service::suspend() (the loop waits at most until the
 * earliest due answer) and Service::resume() (due transactions ask the host
 * to resume them; the host then calls Xaction::resume(), which answers).
 * Squid calls all of this from its one thread: no locks.
 */
#include <libecap/common/autoconf.h> /* LIBECAP_VERSION, for registry.h */
#include <libecap/adapter/service.h>
#include <libecap/adapter/xaction.h>
#include <libecap/common/area.h>
#include <libecap/common/errors.h>
#include <libecap/common/message.h>
#include <libecap/common/name.h>
#include <libecap/common/options.h>
#include <libecap/common/registry.h>
#include <libecap/host/xaction.h>

#include <chrono>
#include <iostream>
#include <list>
#include <string>

namespace {

typedef std::chrono::steady_clock Clock;

class Xaction;

class Service: public libecap::adapter::Service {
public:
	std::string uri() const override { return "ecap://reqsched.test/hold"; }
	std::string tag() const override { return "1"; }
	void describe(std::ostream &os) const override { os << "reqsched test: hold responses"; }
	bool makesAsyncXactions() const override { return true; }
	void configure(const libecap::Options &cfg) override;
	void reconfigure(const libecap::Options &cfg) override { configure(cfg); }
	void suspend(timeval &timeout) override;
	void resume() override;
	bool wantsUrl(const char *) const override { return true; }
	MadeXactionPointer makeXaction(libecap::host::Xaction *hostx) override;

	void wait(Xaction *x, Clock::time_point due) { waiting.push_back({due, x}); }
	void forget(const Xaction *x) { waiting.remove_if([x](const Waiting &w) { return w.x == x; }); }

	Clock::duration hold{};
	bool fromBody = true;

private:
	struct Waiting {
		Clock::time_point due;
		Xaction *x;
	};
	// transactions whose hold has not ended; each leaves in stop() at the latest
	std::list<Waiting> waiting;
};

/*
 * One response. Invariants: `buffered` holds the virgin bytes taken and
 * not yet taken by the host as adapted body; the virgin body is taken only
 * while `taking` (from=body: always; from=headers: once answered).
 */
class Xaction: public libecap::adapter::Xaction {
public:
	Xaction(Service &s, libecap::host::Xaction *h): service(s), hostx(h) {}
	~Xaction() override { service.forget(this); }

	const libecap::Area option(const libecap::Name &) const override { return libecap::Area(); }
	void visitEachOption(libecap::NamedValueVisitor &) const override {}

	void start() override;
	void stop() override { service.forget(this); hostx = nullptr; }
	void resume() override;
	void hostResume() { if (hostx) hostx->resume(); }

	void abDiscard() override { abOn = false; }
	void abMake() override { abOn = true; }
	void abMakeMore() override { take(); }
	void abStopMaking() override { abOn = false; }
	libecap::Area abContent(libecap::size_type offset, libecap::size_type size) override;
	void abContentShift(libecap::size_type size) override { buffered.erase(0, size); }

	void noteVbContentDone(bool atEnd) override;
	void noteVbContentAvailable() override { take(); }

private:
	void take();
	void holdFromNow() { service.wait(this, Clock::now() + service.hold); }

	Service &service;
	libecap::host::Xaction *hostx; // nullptr once stopped
	std::string buffered;
	bool vbOn = false;      // the host delivers virgin body to us
	bool vbEnded = false;   // the virgin body's production is over
	bool vbAtEnd = false;   // ... and it was complete
	bool taking = false;
	bool answered = false;
	bool abOn = false;      // the host takes adapted body
	bool abDone = false;    // told the host that the adapted body is complete
};

void Service::configure(const libecap::Options &cfg)
{
	const std::string h = cfg.option(libecap::Name("hold")).toString();
	hold = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(h.empty() ? 0.0 : std::stod(h)));
	const std::string from = cfg.option(libecap::Name("from")).toString();
	Must(from.empty() || from == "body" || from == "headers");
	fromBody = from != "headers";
}

void Service::suspend(timeval &timeout)
{
	const Clock::time_point now = Clock::now();
	for (const Waiting &w: waiting) {
		const long long us = w.due <= now ? 0 :
			std::chrono::duration_cast<std::chrono::microseconds>(w.due - now).count() + 1;
		if (us < timeout.tv_sec * 1000000LL + timeout.tv_usec) {
			timeout.tv_sec = us / 1000000;
			timeout.tv_usec = us % 1000000;
		}
	}
}

void Service::resume()
{
	const Clock::time_point now = Clock::now();
	for (auto i = waiting.begin(); i != waiting.end();) {
		Xaction *x = i->x;
		if (i->due > now) {
			++i;
			continue;
		}
		i = waiting.erase(i);
		x->hostResume();
	}
}

Service::MadeXactionPointer Service::makeXaction(libecap::host::Xaction *hostx)
{
	return MadeXactionPointer(new Xaction(*this, hostx));
}

void Xaction::start()
{
	if (hostx->virgin().body()) {
		vbOn = true;
		taking = service.fromBody;
		hostx->vbMake();
	}
	if (!vbOn || !service.fromBody)
		holdFromNow();
}

/* the hold is over: answer with a copy of the virgin message, then its body */
void Xaction::resume()
{
	Must(hostx && !answered);
	answered = taking = true;
	const libecap::shared_ptr<libecap::Message> adapted = hostx->virgin().clone();
	hostx->useAdapted(adapted); // a message with a body: the host calls abMake()
	if (hostx && adapted->body())
		take();
}

/* take what the host has of the virgin body; pass on what we have */
void Xaction::take()
{
	if (!hostx)
		return;
	if (vbOn && taking) {
		const libecap::Area a = hostx->vbContent(0, libecap::nsize);
		buffered.append(a.start, a.size);
		hostx->vbContentShift(a.size);
		if (vbEnded) {
			vbOn = false;
			hostx->vbStopMaking();
		}
	}
	if (!abOn || abDone)
		return;
	if (!buffered.empty())
		hostx->noteAbContentAvailable();
	if (!vbOn) {
		abDone = true;
		hostx->noteAbContentDone(vbAtEnd);
	}
}

void Xaction::noteVbContentDone(bool atEnd)
{
	vbEnded = true;
	vbAtEnd = atEnd;
	take();
	if (service.fromBody)
		holdFromNow();
}

libecap::Area Xaction::abContent(libecap::size_type offset, libecap::size_type size)
{
	if (offset >= buffered.size())
		return libecap::Area();
	return libecap::Area::FromTempString(buffered.substr(offset, size));
}

const bool registered = libecap::RegisterVersionedService(new Service);

} // namespace
