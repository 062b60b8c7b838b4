/* An open-loop load for make bench's overload line: get_bike_status calls sent at a fixed rate
 * whatever the server answers (wrk is closed-loop: a slow server slows it down), each on a free
 * kept-alive connection of a pool, latency counted from the time it was due (a call waiting for
 * a free connection waits on the client's clock too). Prints one line:
 *   OPENLOOP sent=N ok=N shed=N limited=N other=N resets=N unanswered=N p50=US p99=US
 * ok: 200 with a structured result; shed: 503 with Retry-After; limited: 429 with Retry-After.
 * Usage: openloop PORT TOKEN RATE SECONDS CONNECTIONS. Built and run by bench/run.sh. */
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

struct ol_conn {
	int fd;
	bool busy;
	long long due_us; /* when its call was due */
	char in[OL_BUF];
	size_t n;
};

static unsigned short ol_port;
static long long ol_ok, ol_shed, ol_limited, ol_other, ol_resets, ol_sent;
static long long *ol_lat;
static size_t ol_nlat, ol_cap;

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
	if (status == 200 && strstr(end, "\"structuredContent\"") &&
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

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: openloop PORT TOKEN RATE SECONDS CONNECTIONS\n");
		return 2;
	}
	ol_port = (unsigned short)atoi(argv[1]);
	const char *token = argv[2];
	double rate = atof(argv[3]);
	long long secs = atoll(argv[4]);
	int nconn = atoi(argv[5]);
	srand(42);
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
