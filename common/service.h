/* The service manager's side of a server process (systemd Type=notify), and the readiness loop
 * behind the readiness gauges.
 *
 * sd_notify(3)'s protocol is written here, without libsystemd: one datagram on the unix socket
 * whose path systemd puts in NOTIFY_SOCKET (a leading '@' names an abstract socket), holding
 * newline-separated assignments: READY=1 once the server can serve (the database and the keys
 * ready), STOPPING=1 when it begins to drain, WATCHDOG=1 every WATCHDOG_USEC / 2 while its HTTP
 * workers answer. A process without NOTIFY_SOCKET sends nothing and runs the same code.
 *
 * Two threads, so that one waiting on the database never starves the other:
 * - readiness: calls ready() every 250 ms until it first says yes (then READY=1), then every
 *   5 s (the callback keeps the gauges current; a load balancer's probes do it too);
 * - watchdog (with WATCHDOG_USEC): every WATCHDOG_USEC / 2, GET /healthz through the server's
 *   own listening socket, accepted, read and answered by the same libmicrohttpd event loops that
 *   read, check and answer every request; WATCHDOG=1 only when it is answered 200 within
 *   WATCHDOG_USEC / 4. A process whose event loops are stuck (a deadlock) stops pinging, and
 *   systemd restarts it after WatchdogSec. Once stopping, it pings without probing (the drain
 *   answers new requests 503; TimeoutStopSec bounds the stop). */
#ifndef BIKAROO_SERVICE_H
#define BIKAROO_SERVICE_H

#include <stdbool.h>

enum service_status { SERVICE_OK = 0, SERVICE_NO_SOCKET, SERVICE_FAILED };

struct service_settings {
	const char *notify_socket; /* NOTIFY_SOCKET: "" for none */
	long watchdog_usec;        /* WATCHDOG_USEC: 0 for no watchdog */
	const char *probe_host;    /* numeric address the watchdog probes the server at */
	unsigned probe_port;       /* the server's HTTP port */
	bool (*ready)(void); /* whether the server can serve now (may block on the database) */
};

struct service;

/* Starts the loops (settings copied; strings borrowed for the service's life). NULL only when
 * a thread cannot start (fatal in mem_thread). Caller ends it with service_stop(). */
struct service *service_start(const struct service_settings *set);
/* STOPPING=1; the watchdog pings from now on without probing. */
void service_stopping(struct service *sv);
/* Stops and joins the loops, frees sv (NULL is a no-op). */
void service_stop(struct service *sv);

/* Sends state (e.g. "READY=1") to the notify socket path; SERVICE_NO_SOCKET when path is "" or
 * NULL, SERVICE_FAILED when the datagram cannot be sent. */
enum service_status service_notify(const char *path, const char *state)
	__attribute__((warn_unused_result));

/* Whether GET /healthz on host:port (numeric, IPv4 or IPv6) is answered 200 within timeout_ms. */
bool service_probe(const char *host, unsigned port, long timeout_ms);

#endif
