/* The HTTP transport's life: its loops (one thread each, its own listening socket on the shared
 * port, its own libmicrohttpd daemon in external epoll mode, its guard), the metrics listener,
 * the graceful stop. Requests are routed by http_route.c; libmicrohttpd types stay in the http_*
 * files. */
#define _GNU_SOURCE /* accept4, pthread_setname_np */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "guard.h"
#include "http_door.h"
#include "http_frame.h"
#include "http_health.h"
#include "http_reply.h"
#include "http_route.h"
#include "http_server.h"
#include "http_stream.h"
#include "peers.h"
#include "listen.h"

/* Each connection's libmicrohttpd memory pool: the request line and headers (a token is at most
 * JWT_MAX_TOKEN, 8 KiB) and the read buffer; bodies are copied out as they come. libmicrohttpd
 * zeroes the pool between requests, so its size is paid per request (the profile of the issue
 * "Hot path at the database's own pace": 2.5-4.5% of the CPU at 64 KiB). */
#define HTTP_CONNECTION_MEMORY ((size_t)16 * 1024)
/* Connections a loop accepts at one turn at most, so that it also answers what it has. */
#define HTTP_ACCEPT_BATCH 64
/* Connections a loop answers at its door at once at most (http_door.h): a refused client reads
 * its answer and closes within milliseconds, so that few are there at a time. */
#define HTTP_DOOR_MAX 256

/* ---- connections: accepted by their loop, followed by its guard (guard.h) ---------------- */

/* libmicrohttpd tells of a connection when it is added and before its descriptor is closed. */
static void http_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode code)
{
	struct http_loop *hl = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? guard_opened(hl->guard, ci->connect_fd) : NULL;
		hl->conns++;
		return;
	}
	http_frame_closed(c);
	guard_closed(hl->guard, *socket_context);
	*socket_context = NULL;
	hl->conns--;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr)
		peers_give(hl->srv->peers, ci->client_addr,
			   ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								  : sizeof(struct sockaddr_in));
}

/* Stops watching the listening socket: what comes waits in the kernel's backlog. */
static void http_pause_accepting(struct http_loop *hl)
{
	if (hl->accepting)
		loop_unwatch(hl->loop, &hl->listen);
	hl->accepting = false;
}

/* Whether a new connection can be accepted now: by the loop (below its share of connections,
 * and below the guard's cap on fresh ones, or once it made room), or at its door. */
static bool http_can_accept(struct http_loop *hl, long long now)
{
	if (atomic_load(&hl->stop))
		return false;
	return hl->conns >= hl->conns_max ? http_door_room(hl->door) : guard_room(hl->guard, now);
}

/* The loop's listening socket is readable: accepts what it can serve now, and what it cannot at
 * its door. */
static void http_accept(struct loop_fd *f, uint32_t events)
{
	(void)events;
	struct http_loop *hl = (struct http_loop *)((char *)f - offsetof(struct http_loop, listen));
	long long now = loop_now_ms();
	for (int i = 0; i < HTTP_ACCEPT_BATCH; i++) {
		if (!http_can_accept(hl, now)) {
			http_pause_accepting(hl);
			return;
		}
		struct sockaddr_storage sa;
		socklen_t len = sizeof sa;
		int fd = accept4(f->fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				log_warn("http: cannot accept a connection: %s (waiting in the "
					 "backlog)",
					 strerror(errno));
				http_pause_accepting(hl);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				   errno != ECONNABORTED) {
				log_warn("http: accept: %s", strerror(errno));
			}
			return;
		}
		bool full = hl->conns >= hl->conns_max;
		if (full || !peers_take(hl->srv->peers, (struct sockaddr *)&sa, len)) {
			if (!http_door_take(hl->door, fd,
					    full ? HTTP_DOOR_FULL : HTTP_DOOR_PER_ADDRESS)) {
				const char *reason[] = {"door_full"};
				metrics_add(&metrics_connections_cut, reason, 1);
				close(fd);
			}
			continue;
		}
		if (MHD_add_connection(hl->daemon, fd, (struct sockaddr *)&sa, len) != MHD_YES)
			peers_give(hl->srv->peers, (struct sockaddr *)&sa, len); /* it closed fd */
	}
}

/* The daemon's epoll set is readable. */
static void http_daemon_ready(struct loop_fd *f, uint32_t events)
{
	(void)events;
	struct http_loop *hl = (struct http_loop *)((char *)f - offsetof(struct http_loop, mhd));
	MHD_run(hl->daemon);
}

/* The loop's hook: the connections resumed since the daemon ran, accepting again, the guard's
 * deadlines, the daemon's timeouts. */
static long long http_loop_due(struct loop_hook *h, long long now)
{
	struct http_loop *hl = (struct http_loop *)((char *)h - offsetof(struct http_loop, hook));
	if (hl->resumed) {
		hl->resumed = false;
		MHD_run(hl->daemon);
	}
	long long due = guard_tick(hl->guard, now), admit = http_admit(hl, now),
		  door = http_door_tick(hl->door, now);
	if (!hl->accepting && http_can_accept(hl, now) &&
	    loop_watch(hl->loop, &hl->listen, EPOLLIN) == 0)
		hl->accepting = true;
	if (admit < due)
		due = admit;
	if (door && door < due)
		due = door;
	if (hl->resumed) { /* refusals of waiting calls, and calls that did not wait */
		hl->resumed = false;
		MHD_run(hl->daemon);
	}
	/* The daemon has work that no descriptor will tell of (a response queued on a socket that
	 * stays writable, its epoll being edge-triggered): it runs now. */
	MHD_UNSIGNED_LONG_LONG to = 0;
	for (int i = 0; i < 4 && MHD_get_timeout(hl->daemon, &to) == MHD_YES && to == 0; i++)
		MHD_run(hl->daemon);
	if (MHD_get_timeout(hl->daemon, &to) == MHD_YES && (long long)(now + (long long)to) < due)
		due = now + (long long)to;
	return due;
}

/* A fresh connection that sent nothing yet, cut to make room for others: its client reads why. */
static void http_cut_for_room(int fd)
{
	char *body = http_error_body(MCP_RATE_LIMITED,
				     "Service Unavailable: too many connections without a request "
				     "yet; retry (nothing was done)");
	(void)http_answer_on_socket(fd, 503, "Service Unavailable", "Retry-After: 1\r\n", body);
	free(body);
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

/* A listening socket on sa:port (port overrides sa's), or -1 with errno set; reuseport: one of
 * several on that port, among which the kernel spreads new connections. The backlog is the
 * kernel's most: past what the loops accept, connections wait there, never refused. */
static int http_listen_socket(struct sockaddr_storage *sa, unsigned len, long port, bool reuseport)
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
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
	if (bind(fd, (struct sockaddr *)sa, (socklen_t)len) != 0 || listen(fd, SOMAXCONN) != 0) {
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
	int fd = http_listen_socket(&sa, len, port, false);
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

/* A loop's thread: turns until it is stopped and its last call has ended, then stops its daemon
 * (every connection closes) and frees its loop (its database connections close). */
static void *http_loop_run(void *arg)
{
	struct http_loop *hl = arg;
	pthread_setname_np(pthread_self(), "http-loop"); /* what ps, gdb and the tests see */
	while (!atomic_load(&hl->stop) || task_live() > 0 || hl->waiting > 0)
		loop_turn(hl->loop, true);
	http_pause_accepting(hl);
	MHD_stop_daemon(hl->daemon);
	hl->daemon = NULL;
	http_door_free(hl->door);
	hl->door = NULL;
	loop_free(hl->loop);
	hl->loop = NULL;
	task_idle_free();
	return NULL;
}

/* Loop i's socket, daemon and hook; -1 (logged) when it cannot have them. */
static int http_loop_open(struct http_server *s, long i, const struct http_settings *set,
			  struct sockaddr_storage *sa, unsigned salen, long *port, long max_conn)
{
	struct http_loop *hl = &s->loops[i];
	hl->srv = s;
	hl->listen = (struct loop_fd){.fd = -1, .ready = http_accept};
	int fd = http_listen_socket(sa, salen, *port, true);
	if (fd < 0) {
		log_error("cannot listen on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT): %s",
			  set->listen, *port, strerror(errno));
		return -1;
	}
	hl->listen.fd = fd;
	if (*port == 0)
		*port = http_bound_port(fd); /* the others share the port the first was given */
	hl->conns_max = max_conn / s->nloops > 0 ? max_conn / s->nloops : 1;
	hl->calls_max = set->calls_max / s->nloops > 0 ? set->calls_max / s->nloops : 1;
	/* Connections without a complete request have not shown a token: a share of the total,
	 * never all of it, so that they cannot keep valid callers out. */
	long max_pending = set->max_pending;
	if (max_pending <= 0 || max_pending >= max_conn)
		max_pending = max_conn / 4 > 0 ? max_conn / 4 : 1;
	struct guard_settings gs = {
		.header_ms = set->header_timeout_ms,
		.body_ms = set->body_timeout_ms,
		.max_pending = max_pending / s->nloops > 0 ? max_pending / s->nloops : 1,
		.cut_for_room = http_cut_for_room};
	hl->guard = guard_new(&gs);
	hl->daemon = MHD_start_daemon(
		MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG |
			MHD_ALLOW_SUSPEND_RESUME | (sa->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, http_access, hl, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, http_completed, hl, MHD_OPTION_NOTIFY_CONNECTION,
		http_connection, hl, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)hl->conns_max + 1,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONNECTION_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, http_frame_uri, NULL, MHD_OPTION_END);
	const union MHD_DaemonInfo *di =
		hl->daemon ? MHD_get_daemon_info(hl->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di) {
		log_error("cannot serve HTTP on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT)",
			  set->listen, *port);
		return -1;
	}
	hl->loop = loop_new();
	hl->door = http_door_new(hl->loop, HTTP_DOOR_MAX);
	hl->mhd = (struct loop_fd){.fd = di->epoll_fd, .ready = http_daemon_ready};
	hl->hook = (struct loop_hook){.due = http_loop_due};
	if (loop_watch(hl->loop, &hl->mhd, EPOLLIN) != 0 ||
	    loop_watch(hl->loop, &hl->listen, EPOLLIN) != 0) {
		log_error("cannot watch the HTTP sockets: %s", strerror(errno));
		return -1;
	}
	hl->accepting = true;
	loop_hook(hl->loop, &hl->hook);
	return 0;
}

/* Frees what http_loop_open made of loop i, once its thread (if any) has ended. */
static void http_loop_close(struct http_loop *hl)
{
	if (hl->daemon)
		MHD_stop_daemon(hl->daemon);
	http_door_free(hl->door);
	loop_free(hl->loop);
	if (hl->listen.fd >= 0)
		close(hl->listen.fd);
	guard_free(hl->guard);
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
	struct http_server *s = mem_calloc(1, sizeof *s);
	s->ready = set->ready;
	http_stream_ops_init(&s->stream_ops);
	s->mcp = mcp;
	s->tokens = actor == NULL;
	if (actor)
		s->actor = *actor;
	s->max_body = set->max_body;
	s->call_timeout_ms = set->call_timeout_ms;
	s->allowed_hosts = mem_strdup(set->allowed_hosts);
	s->allowed_origins = mem_strdup(set->allowed_origins);
	s->hub = listen_hub_new(mcp_service_changes(mcp), HTTP_MAX_STREAMS,
				(size_t)set->listen_per_subject, set->keepalive_s);
	s->peers = peers_new(set->max_per_ip);
	s->nloops = set->threads > 0 ? set->threads : 1;
	s->loops = mem_calloc((size_t)s->nloops, sizeof *s->loops);
	for (long i = 0; i < s->nloops; i++)
		s->loops[i].listen.fd = -1;
	/* The doors' connections come on top of the loops' own. */
	long doors = HTTP_DOOR_MAX * s->nloops;
	long max_conn = http_fd_budget(set->max_connections + doors) - doors;
	if (max_conn < s->nloops)
		max_conn = s->nloops;
	long port = set->port;
	for (long i = 0; i < s->nloops; i++)
		if (http_loop_open(s, i, set, &sa, salen, &port, max_conn) != 0) {
			http_stop(s);
			return HTTP_START_FAILED;
		}
	*bound_port = (unsigned)port;
	for (long i = 0; i < s->nloops; i++)
		mem_thread(&s->loops[i].thread, http_loop_run, &s->loops[i], "http loop");
	s->running = true;
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
	long long t0 = loop_now_ms();
	/* From here on every new request is answered 503 "stopping; retry (nothing was done)" with
	 * Connection: close (http_route, http_send_headers); the listening sockets stay open. */
	atomic_store(&s->stopping, true);
	for (long i = 0; i < s->nloops; i++)
		guard_cut_waiting(s->loops[i].guard); /* idle ones: a proxy goes elsewhere */
	listen_hub_end_all(s->hub, true);             /* each stream ends with its result */
	long waited = 0;
	int left;
	while ((left = atomic_load(&s->inflight)) > 0 && waited < limit_ms) {
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
		waited = (long)(loop_now_ms() - t0);
	}
	if (left > 0)
		log_warn("http: %d request(s) still unanswered after the drain limit (%ld ms)",
			 left, limit_ms);
	return waited;
}

/* Wakes a loop so that it sees its stop flag. */
static void http_loop_nothing(struct loop_job *j)
{
	(void)j;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	/* Listen streams end with their result; a daemon may stop only when no connection is
	 * suspended, which ending them ensures. Calls end by their deadline. */
	listen_hub_end_all(s->hub, true);
	if (s->running)
		http_streams_drain(s);
	struct loop_job *wake = mem_calloc((size_t)s->nloops + 1, sizeof *wake);
	for (long i = 0; i < s->nloops && s->running; i++) {
		atomic_store(&s->loops[i].stop, true);
		wake[i] = (struct loop_job){.run = http_loop_nothing};
		loop_post(s->loops[i].loop, &wake[i]);
	}
	for (long i = 0; i < s->nloops; i++) {
		if (s->running)
			pthread_join(s->loops[i].thread, NULL);
		http_loop_close(&s->loops[i]);
	}
	free(wake);
	if (s->metrics)
		MHD_stop_daemon(s->metrics);
	listen_hub_free(s->hub);
	peers_free(s->peers);
	free(s->loops);
	free(s->allowed_hosts);
	free(s->allowed_origins);
	free(s);
}
