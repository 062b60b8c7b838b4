/* An open-loop load for make bench's overload lines: get_bike_status calls sent at a fixed rate
 * whatever the server answers (wrk is closed-loop: a slow server slows it down), latency counted
 * from the time each was due (a call waiting for a free connection waits on the client's clock
 * too). Two ways to send them:
 *   keep-alive: each on a free kept-alive connection of a pool of CONNECTIONS;
 *   fresh: each on a new connection of its own (as many hosts behind no proxy would), at most
 *   CONNECTIONS in flight; a GET /healthz on a new connection every 100 ms besides, its
 *   latency and status counted apart (probe_p99, probe_bad: not 200 or no answer).
 * Prints one line:
 *   OPENLOOP sent=N ok=N shed=N limited=N other=N resets=N unanswered=N p50=US p99=US
 *            [probes=N probe_bad=N probe_p99=US]
 * ok: 200 with a structured result; shed: 503 with Retry-After; limited: 429 with Retry-After;
 * resets: the connection ended (or failed to connect) without an answer.
 * Usage: openloop PORT TOKEN RATE SECONDS CONNECTIONS [fresh]. Built and run by bench/run.sh. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OL_BUF 65536
#define OL_HOSTS 64 /* fresh: the client addresses, 127.0.0.2 and on */

struct ol_conn {
	int fd;
	bool busy;
	bool connecting;  /* fresh: waiting for the connection before sending */
	bool probe;       /* fresh: a GET /healthz */
	long long due_us; /* when its call was due */
	char in[OL_BUF];
	size_t n;
};

static unsigned short ol_port;
static long long ol_ok, ol_shed, ol_limited, ol_other, ol_resets, ol_sent;
static long long *ol_lat;
static size_t ol_nlat, ol_cap;
static long long ol_probes, ol_probe_bad, *ol_probe_lat;
static size_t ol_nprobe;

static long long ol_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int ol_open(int ep, struct ol_conn *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(ol_port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS)
		return -1;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	c->busy = false;
	c->n = 0;
	return epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
}

static void ol_reopen(int ep, struct ol_conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	ol_open(ep, c);
}

static int ol_send(struct ol_conn *c, const char *token, long long due)
{
	char body[512], req[8192];
	long n = 3L * (33334 + rand() % (65332 - 33334 + 1)) + 2;
	int blen = snprintf(body, sizeof body,
			    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
			    "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-%ld\"},"
			    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
			    n);
	int len = snprintf(
		req, sizeof req,
		"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
		"Accept: application/json, text/event-stream\r\n"
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
		"Mcp-Name: get_bike_status\r\nAuthorization: Bearer %s\r\n"
		"Content-Length: %d\r\n\r\n%s",
		token, blen, body);
	if (send(c->fd, req, (size_t)len, MSG_NOSIGNAL) != len)
		return -1;
	c->busy = true;
	c->due_us = due;
	ol_sent++;
	return 0;
}

/* A whole response in c->in: accounted, consumed; 1 when done, 0 when more is needed. */
static int ol_response(struct ol_conn *c, bool *close_after)
{
	c->in[c->n < OL_BUF ? c->n : OL_BUF - 1] = '\0';
	char *end = strstr(c->in, "\r\n\r\n");
	if (!end)
		return 0;
	int status = 0;
	sscanf(c->in, "HTTP/1.1 %d", &status);
	const char *cl = strcasestr(c->in, "\r\nContent-Length: ");
	size_t len = cl && cl < end ? strtoul(cl + 18, NULL, 10) : 0;
	size_t total = (size_t)(end + 4 - c->in) + len;
	if (c->n < total)
		return 0;
	bool retry = strcasestr(c->in, "\r\nRetry-After: ") != NULL;
	*close_after = strcasestr(c->in, "\r\nConnection: close") != NULL;
	char save = c->in[total];
	c->in[total] = '\0';
	if (c->probe) {
		ol_probe_bad += status != 200;
		ol_probe_lat[ol_nprobe++] = ol_now_us() - c->due_us;
	} else if (status == 200 && strstr(end, "\"structuredContent\"") &&
		   !strstr(end, "\"isError\":true")) {
		ol_ok++;
		if (ol_nlat == ol_cap) {
			ol_cap = ol_cap ? ol_cap * 2 : 65536;
			ol_lat = realloc(ol_lat, ol_cap * sizeof *ol_lat);
		}
		ol_lat[ol_nlat++] = ol_now_us() - c->due_us;
	} else if (status == 503 && retry) {
		ol_shed++;
	} else if (status == 429 && retry) {
		ol_limited++;
	} else {
		ol_other++;
	}
	c->in[total] = save;
	memmove(c->in, c->in + total, c->n - total);
	c->n -= total;
	c->busy = false;
	return 1;
}

static int ol_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* fresh: a new connection for a call (or a probe) due at due; -1 when none could be made. */
static int ol_fresh(int ep, struct ol_conn *c, long long due, bool probe)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -1;
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* From one of OL_HOSTS loopback addresses in turn, as many hosts would come: each address
	 * has its own ephemeral ports, where one address's 28,000 run out within seconds at these
	 * rates (each closed connection holds its port in TIME_WAIT for a minute) and every
	 * connect() then searches the range (the client's latency, not the server's). */
	static unsigned host;
	struct sockaddr_in from = {.sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(0x7f000002u + host++ % OL_HOSTS)};
	setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(ol_port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (bind(c->fd, (struct sockaddr *)&from, sizeof from) != 0 ||
	    (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS)) {
		close(c->fd);
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.ptr = c};
	epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
	c->busy = true;
	c->connecting = true;
	c->probe = probe;
	c->due_us = due;
	c->n = 0;
	return 0;
}

static void ol_fresh_done(int ep, struct ol_conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->busy = false;
	c->fd = -1;
}

/* fresh: CONNECTIONS slots, each a call on a connection of its own; a probe every 100 ms. */
static int ol_run_fresh(const char *token, double rate, long long secs, int nslots)
{
	int ep = epoll_create1(0);
	struct ol_conn *slots = calloc((size_t)nslots + 64, sizeof *slots);
	struct ol_conn *probes = slots + nslots;
	ol_probe_lat = calloc((size_t)secs * 10 + 64, sizeof *ol_probe_lat);
	size_t qcap = (size_t)(rate * (double)secs) + 16, qh = 0, qt = 0;
	long long *queue = calloc(qcap, sizeof *queue);
	long long t0 = ol_now_us() + 200000, end = t0 + secs * 1000000, next = t0, pnext = t0;
	double interval = 1e6 / rate;
	long long k = 0;
	int free_from = 0;
	for (;;) {
		long long now = ol_now_us();
		while (next <= now && next < end && qt < qcap) {
			queue[qt++] = next;
			k++;
			next = t0 + (long long)((double)k * interval);
		}
		if (pnext <= now && pnext < end) {
			for (int i = 0; i < 64; i++)
				if (!probes[i].busy) {
					if (ol_fresh(ep, &probes[i], pnext, true) == 0)
						ol_probes++;
					else
						ol_probe_bad++;
					break;
				}
			pnext += 100000;
		}
		for (int n = 0; n < nslots && qh < qt; n++) {
			int i = (free_from + n) % nslots;
			if (slots[i].busy)
				continue;
			if (ol_fresh(ep, &slots[i], queue[qh], false) != 0) {
				ol_resets++;
				ol_sent++;
			}
			qh++;
			free_from = i + 1;
		}
		bool inflight = false;
		for (int i = 0; i < nslots + 64 && !inflight; i++)
			inflight = slots[i].busy;
		if (now >= end && (qh == qt || now >= end + 2000000) &&
		    (!inflight || now >= end + 5000000))
			break;
		long long wait_us = next < end ? next - now : 10000;
		if (pnext < end && pnext - now < wait_us)
			wait_us = pnext - now;
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, (int)(wait_us > 0 ? (wait_us + 999) / 1000 : 0));
		for (int e = 0; e < n; e++) {
			struct ol_conn *c = evs[e].data.ptr;
			if (c->connecting) {
				int err = 0;
				socklen_t len = sizeof err;
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err) {
					if (c->probe)
						ol_probe_bad++;
					else
						ol_resets++, ol_sent++;
					ol_fresh_done(ep, c);
					continue;
				}
				c->connecting = false;
				struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				static const char probe[] =
					"GET /healthz HTTP/1.1\r\nHost: "
					"127.0.0.1\r\nConnection: close\r\n\r\n";
				bool sent = c->probe ? send(c->fd, probe, sizeof probe - 1,
							    MSG_NOSIGNAL) == sizeof probe - 1
						     : ol_send(c, token, c->due_us) == 0;
				if (!sent) {
					if (c->probe)
						ol_probe_bad++;
					else
						ol_resets++;
					ol_fresh_done(ep, c);
				}
				continue;
			}
			ssize_t got = recv(c->fd, c->in + c->n, OL_BUF - 1 - c->n, 0);
			if (got <= 0) {
				if (got < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (c->probe)
					ol_probe_bad++;
				else
					ol_resets++;
				ol_fresh_done(ep, c);
				continue;
			}
			c->n += (size_t)got;
			bool close_after = false;
			if (ol_response(c, &close_after))
				ol_fresh_done(ep, c);
		}
	}
	long long unanswered = (long long)(qt - qh);
	for (int i = 0; i < nslots; i++)
		unanswered += slots[i].busy;
	for (int i = 0; i < 64; i++)
		ol_probe_bad += probes[i].busy;
	qsort(ol_lat, ol_nlat, sizeof *ol_lat, ol_cmp);
	qsort(ol_probe_lat, ol_nprobe, sizeof *ol_probe_lat, ol_cmp);
	long long p50 = ol_nlat ? ol_lat[ol_nlat / 2] : 0;
	long long p99 = ol_nlat ? ol_lat[(size_t)((double)ol_nlat * 0.99)] : 0;
	long long pp99 = ol_nprobe ? ol_probe_lat[(size_t)((double)ol_nprobe * 0.99)] : 0;
	printf("OPENLOOP sent=%lld ok=%lld shed=%lld limited=%lld other=%lld resets=%lld "
	       "unanswered=%lld p50=%lld p99=%lld probes=%lld probe_bad=%lld probe_p99=%lld\n",
	       ol_sent, ol_ok, ol_shed, ol_limited, ol_other, ol_resets, unanswered, p50, p99,
	       ol_probes, ol_probe_bad, pp99);
	return 0;
}

/* The whole of text as a number in [lo, hi], or -1. */
static long ol_number(const char *text, long lo, long hi)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	return errno || end == text || *end || v < lo || v > hi ? -1 : v;
}

int main(int argc, char **argv)
{
	if (argc != 6 && !(argc == 7 && strcmp(argv[6], "fresh") == 0)) {
		fprintf(stderr, "usage: openloop PORT TOKEN RATE SECONDS CONNECTIONS [fresh]\n");
		return 2;
	}
	long port = ol_number(argv[1], 1, 65535), secs = ol_number(argv[4], 1, 3600),
	     nconn = ol_number(argv[5], 1, 100000);
	char *rest = NULL;
	double rate = strtod(argv[3], &rest);
	if (port < 0 || secs < 0 || nconn < 0 || !rest || *rest || !(rate > 0 && rate < 1e7)) {
		fprintf(stderr, "openloop: PORT 1-65535, RATE > 0, SECONDS 1-3600, CONNECTIONS "
				"1-100000\n");
		return 2;
	}
	ol_port = (unsigned short)port;
	const char *token = argv[2];
	srand(42);
	if (argc == 7)
		return ol_run_fresh(token, rate, secs, (int)nconn);
	int ep = epoll_create1(0);
	struct ol_conn *conns = calloc((size_t)nconn, sizeof *conns);
	for (int i = 0; i < nconn; i++)
		ol_open(ep, &conns[i]);
	/* Calls due and not sent yet (no free connection), oldest first. */
	size_t qcap = (size_t)(rate * (double)secs) + 16, qh = 0, qt = 0;
	long long *queue = calloc(qcap, sizeof *queue);
	long long t0 = ol_now_us() + 200000, end = t0 + secs * 1000000, next = t0;
	double interval = 1e6 / rate;
	long long k = 0;
	for (;;) {
		long long now = ol_now_us();
		while (next <= now && next < end && qt < qcap) {
			queue[qt++] = next;
			k++;
			next = t0 + (long long)((double)k * interval);
		}
		for (int i = 0; i < nconn && qh < qt; i++)
			if (!conns[i].busy) {
				if (ol_send(&conns[i], token, queue[qh]) == 0)
					qh++;
				else
					ol_reopen(ep, &conns[i]);
			}
		bool inflight = false;
		for (int i = 0; i < nconn && !inflight; i++)
			inflight = conns[i].busy;
		if (now >= end && (qh == qt || now >= end + 2000000) &&
		    (!inflight || now >= end + 2000000))
			break;
		long long wait_us = next < end ? next - now : 10000;
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, (int)(wait_us > 0 ? (wait_us + 999) / 1000 : 0));
		for (int e = 0; e < n; e++) {
			struct ol_conn *c = evs[e].data.ptr;
			ssize_t got = recv(c->fd, c->in + c->n, OL_BUF - 1 - c->n, 0);
			if (got <= 0) {
				if (got < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (c->busy)
					ol_resets++;
				ol_reopen(ep, c);
				continue;
			}
			c->n += (size_t)got;
			bool close_after = false;
			while (c->busy && ol_response(c, &close_after))
				;
			if (close_after)
				ol_reopen(ep, c);
		}
	}
	long long unanswered = (long long)(qt - qh);
	for (int i = 0; i < nconn; i++)
		unanswered += conns[i].busy;
	qsort(ol_lat, ol_nlat, sizeof *ol_lat, ol_cmp);
	long long p50 = ol_nlat ? ol_lat[ol_nlat / 2] : 0;
	long long p99 = ol_nlat ? ol_lat[(size_t)((double)ol_nlat * 0.99)] : 0;
	printf("OPENLOOP sent=%lld ok=%lld shed=%lld limited=%lld other=%lld resets=%lld "
	       "unanswered=%lld p50=%lld p99=%lld\n",
	       ol_sent, ol_ok, ol_shed, ol_limited, ol_other, ol_resets, unanswered, p50, p99);
	return 0;
}
