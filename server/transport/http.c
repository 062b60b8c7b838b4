/* The HTTP transport's life: its listening sockets, its libmicrohttpd daemons (the MCP endpoint
 * and the metrics listener), the connections the slow-client guard follows, the graceful stop.
 * Requests are routed by http_route.c; libmicrohttpd types stay in the http_* files. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "guard.h"
#include "http_frame.h"
#include "http_health.h"
#include "http_route.h"
#include "http_server.h"
#include "http_stream.h"
#include "http_work.h"
#include "listen.h"

/* Each connection's libmicrohttpd memory pool: the request line and headers (a token is at most
 * JWT_MAX_TOKEN, 8 KiB) and the read buffer; bodies are copied out as they come. libmicrohttpd
 * zeroes the pool between requests, so its size is paid per request (the profile of the issue
 * "Hot path at the database's own pace": 2.5-4.5% of the CPU at 64 KiB). */
#define HTTP_CONNECTION_MEMORY ((size_t)16 * 1024)
/* libmicrohttpd's event threads: they read, check and answer; calls run on the workers
 * (BIKAROO_THREADS, http_work.h), so a few are enough to keep probes and refusals immediate. */
#define HTTP_EVENT_THREADS 4u

/* ---- connections: the slow-client guard (guard.h) sees each one from accept to close ---- */

/* libmicrohttpd tells of a connection before its descriptor is closed. */
static void http_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? guard_opened(s->guard, ci->connect_fd) : NULL;
	} else {
		http_frame_closed(c);
		guard_closed(s->guard, *socket_context);
		*socket_context = NULL;
	}
}

/* Raises the soft limit on open descriptors to what max_conn connections need (plus database
 * connections, logs, the listen socket); returns the connections the limit allows. */
static long http_fd_budget(long max_conn)
{
	const long spare = 128;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return max_conn;
	rlim_t need = (rlim_t)(max_conn + spare);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need) {
			long fit =
				(long)rl.rlim_cur > 2 * spare ? (long)rl.rlim_cur - spare : spare;
			log_warn("http: the descriptor limit allows %ld connections, not %ld", fit,
				 max_conn);
			return fit;
		}
	}
	return max_conn;
}

void http_set_draining(struct http_server *s, bool draining)
{
	atomic_store(&s->draining, draining);
}

/* libmicrohttpd's own messages: fmt is its format string. */
__attribute__((format(printf, 2, 0))) static void http_mhd_log(void *cls, const char *fmt,
							       va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	log_warn("http: %s", line);
	http_frame_mhd_said(line);
}

/* Writes the bound port to path (when set) once the socket accepts connections, atomically
 * (write then rename), for the harnesses and scripts that start the server on port 0. */
static int http_write_ready(const char *path, unsigned port)
{
	if (!*path)
		return 0;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

int http_parse_address(const char *text, long *port_out, struct sockaddr_storage *sa, unsigned *len)
{
	char host[64];
	const char *p = text;
	size_t n;
	const char *rest;
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (!close)
			return -1;
		n = (size_t)(close - p - 1);
		p++;
		rest = close + 1;
	} else if (port_out) {
		const char *colon = strrchr(p, ':');
		if (!colon || strchr(p, ':') != colon)
			return -1; /* an IPv6 address with a port needs its brackets */
		n = (size_t)(colon - p);
		rest = colon;
	} else {
		n = strlen(p);
		rest = p + n;
	}
	if (n == 0 || n >= sizeof host)
		return -1;
	memcpy(host, p, n);
	host[n] = '\0';
	long port = 0;
	if (port_out) {
		char *end = NULL;
		if (*rest != ':' || !rest[1])
			return -1;
		errno = 0;
		port = strtol(rest + 1, &end, 10);
		if (errno || *end || port < 0 || port > 65535)
			return -1;
		*port_out = port;
	} else if (*rest) {
		return -1;
	}
	memset(sa, 0, sizeof *sa);
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof *v4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof *v6;
		return 0;
	}
	return -1;
}

/* A listening socket on sa:port (port overrides sa's), or -1 with errno set. */
static int http_listen_socket(struct sockaddr_storage *sa, unsigned len, long port)
{
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
	if (bind(fd, (struct sockaddr *)sa, (socklen_t)len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static unsigned http_bound_port(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return 0;
	return ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
					      : ((struct sockaddr_in *)&sa)->sin_port);
}

/* The metrics listener on set->metrics_listen; 0 (also when none is configured), or -1
 * (logged). */
static int http_metrics_start(struct http_server *s, const char *listen)
{
	if (!*listen)
		return 0;
	struct sockaddr_storage sa;
	unsigned len;
	long port;
	if (http_parse_address(listen, &port, &sa, &len) != 0) {
		log_error("BIKAROO_METRICS_LISTEN must be ADDRESS:PORT (127.0.0.1:9464, "
			  "[::1]:9464), got %s",
			  listen);
		return -1;
	}
	int fd = http_listen_socket(&sa, len, port);
	if (fd < 0) {
		log_error("cannot listen for metrics on %s (BIKAROO_METRICS_LISTEN): %s", listen,
			  strerror(errno));
		return -1;
	}
	unsigned bound = http_bound_port(fd);
	s->metrics = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
			(sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, http_metrics_access, s, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log,
		NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_URI_LOG_CALLBACK,
		http_frame_uri, NULL, MHD_OPTION_NOTIFY_CONNECTION, http_frame_notify, NULL,
		MHD_OPTION_END);
	if (!s->metrics) {
		close(fd);
		log_error("cannot serve metrics on %s (BIKAROO_METRICS_LISTEN)", listen);
		return -1;
	}
	char shown[80];
	snprintf(shown, sizeof shown, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
	log_info("metrics at http://%s:%u/metrics", shown, bound);
	return 0;
}

enum http_status http_start(const struct http_settings *set, const struct mcp_service *mcp,
			    const struct fleet_actor *actor, struct http_server **out,
			    unsigned *bound_port)
{
	struct sockaddr_storage sa;
	unsigned salen;
	if (http_parse_address(set->listen, NULL, &sa, &salen) != 0) {
		log_error("BIKAROO_LISTEN must be an IPv4 or IPv6 address (127.0.0.1, ::1), got %s",
			  set->listen);
		return HTTP_START_FAILED;
	}
	int fd = http_listen_socket(&sa, salen, set->port);
	if (fd < 0) {
		log_error("cannot listen on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT): %s",
			  set->listen, set->port, strerror(errno));
		return HTTP_START_FAILED;
	}
	*bound_port = http_bound_port(fd);
	struct http_server *s = mem_calloc(1, sizeof *s);
	s->ready = set->ready;
	http_stream_ops_init(&s->stream_ops);
	s->mcp = mcp;
	s->tokens = actor == NULL;
	if (actor)
		s->actor = *actor;
	s->max_body = set->max_body;
	s->call_timeout_ms = set->call_timeout_ms;
	struct http_work_settings ws = {.threads = set->threads,
					.calls_max = set->calls_max > 0 ? set->calls_max : 1,
					.queue_max = set->queue_max > 0 ? set->queue_max : 1,
					.queue_wait_ms = set->queue_wait_ms};
	http_route_init(&ws);
	s->work = http_work_new(&ws);
	s->allowed_hosts = mem_strdup(set->allowed_hosts);
	s->allowed_origins = mem_strdup(set->allowed_origins);
	s->hub = listen_hub_new(mcp_service_changes(mcp), HTTP_MAX_STREAMS,
				(size_t)set->listen_per_subject, set->keepalive_s);
	long max_conn = http_fd_budget(set->max_connections);
	/* Connections without a complete request have not shown a token: a share of the total,
	 * never all of it, so that they cannot keep valid callers out. */
	long max_pending = set->max_pending;
	if (max_pending <= 0 || max_pending >= max_conn) {
		max_pending = max_conn / 4 > 0 ? max_conn / 4 : 1;
		log_warn("http: %ld connections at most may wait for their headers (a quarter of "
			 "BIKAROO_MAX_CONNECTIONS; BIKAROO_MAX_PENDING_HEADERS must be below it)",
			 max_pending);
	}
	struct guard_settings gs = {.header_ms = set->header_timeout_ms,
				    .body_ms = set->body_timeout_ms,
				    .max_pending = max_pending};
	s->guard = guard_new(&gs);
	s->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			MHD_ALLOW_SUSPEND_RESUME | (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, http_access, s, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, HTTP_EVENT_THREADS,
		MHD_OPTION_NOTIFY_COMPLETED, http_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
		http_connection, s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conn, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)set->max_per_ip, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		HTTP_CONNECTION_MEMORY, MHD_OPTION_URI_LOG_CALLBACK, http_frame_uri, NULL,
		MHD_OPTION_END);
	if (!s->daemon) {
		close(fd);
		log_error("cannot serve HTTP on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT)",
			  set->listen, set->port);
		http_stop(s);
		return HTTP_START_FAILED;
	}
	if (http_metrics_start(s, set->metrics_listen ? set->metrics_listen : "") != 0) {
		http_stop(s);
		return HTTP_START_FAILED;
	}
	if (http_write_ready(set->ready_file, *bound_port) != 0)
		log_warn("cannot write the ready file %s", set->ready_file);
	*out = s;
	return HTTP_OK;
}

long http_drain(struct http_server *s, long limit_ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* From here on every new request is answered 503 "stopping; retry (nothing was done)" with
	 * Connection: close (http_route, http_send_headers). The listening socket stays open:
	 * libmicrohttpd 0.9.75's MHD_quiesce_daemon() races its own epoll workers (both remove the
	 * socket from a worker's epoll set; the loser aborts the process, "Failed to remove listen
	 * FD from epoll set", seen in CI at a stop with 16 workers). */
	atomic_store(&s->stopping, true);
	guard_cut_waiting(s->guard);      /* idle ones: a proxy sends its next request elsewhere */
	listen_hub_end_all(s->hub, true); /* each stream ends with its result */
	long waited = 0;
	int left;
	while ((left = atomic_load(&s->inflight)) > 0 && waited < limit_ms) {
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
	}
	if (left > 0)
		log_warn("http: %d request(s) still unanswered after the drain limit (%ld ms)",
			 left, limit_ms);
	return waited;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	if (s->daemon) {
		/* Listen streams end with their result; libmicrohttpd may stop only when no
		 * connection is suspended, which ending them ensures. */
		listen_hub_end_all(s->hub, true);
		http_work_free(s->work); /* what is still queued is answered 503 */
		s->work = NULL;
		http_streams_drain(s);
		MHD_stop_daemon(s->daemon);
	}
	if (s->metrics)
		MHD_stop_daemon(s->metrics);
	http_work_free(s->work); /* when the daemon never started */
	guard_free(s->guard);    /* after the daemon: every connection was closed */
	listen_hub_free(s->hub);
	free(s->allowed_hosts);
	free(s->allowed_origins);
	free(s);
}
