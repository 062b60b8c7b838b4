/* systemd notifications and the readiness and watchdog loops (service.h). */
#include "service.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mem.h"

#define SERVICE_READY_POLL_MS 250
#define SERVICE_READY_EVERY_MS 5000

struct service {
	struct service_settings set;
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t wake;  /* CLOCK_MONOTONIC: stop or stopping */
	bool stop, stopping;
	pthread_t readiness, watchdog;
	bool has_watchdog;
};

enum service_status service_notify(const char *path, const char *state)
{
	if (!path || !*path)
		return SERVICE_NO_SOCKET;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	if (n >= sizeof sa.sun_path || (path[0] != '/' && path[0] != '@'))
		return SERVICE_FAILED;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* an abstract socket: the length says where it ends */
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return SERVICE_FAILED;
	ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
	return sent == (ssize_t)strlen(state) ? SERVICE_OK : SERVICE_FAILED;
}

/* Waits until fd is ready for events or the deadline (monotonic ms) passes. */
static bool service_wait_fd(int fd, short events, long deadline_ms)
{
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = deadline_ms - (now.tv_sec * 1000 + now.tv_nsec / 1000000);
		if (left <= 0)
			return false;
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, (int)left);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

bool service_probe(const char *host, unsigned port, long timeout_ms)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		len = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		len = sizeof *v6;
	} else {
		return false;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long deadline = t0.tv_sec * 1000 + t0.tv_nsec / 1000000 + timeout_ms;
	bool ok = false;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&ss, len) != 0 &&
	    (errno != EINPROGRESS || !service_wait_fd(fd, POLLOUT, deadline)))
		goto out;
	int err = 0;
	socklen_t elen = sizeof err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0)
		goto out;
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
				  "Connection: close\r\n\r\n";
	if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof req - 1))
		goto out;
	char line[64] = "";
	size_t got = 0;
	while (got < sizeof line - 1 && !memchr(line, '\n', got)) {
		if (!service_wait_fd(fd, POLLIN, deadline))
			goto out;
		ssize_t r = recv(fd, line + got, sizeof line - 1 - got, 0);
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	line[got] = '\0';
	ok = strncmp(line, "HTTP/1.1 200 ", 13) == 0 || strncmp(line, "HTTP/1.0 200 ", 13) == 0;
out:
	close(fd);
	return ok;
}

/* Under sv->lock: sleeps ms, or until stop (true) or, when on_stopping, stopping. */
static bool service_sleep(struct service *sv, long ms, bool on_stopping)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!sv->stop && !(on_stopping && sv->stopping))
		if (pthread_cond_timedwait(&sv->wake, &sv->lock, &until) == ETIMEDOUT)
			break;
	return sv->stop;
}

static void *service_readiness_run(void *arg)
{
	struct service *sv = arg;
	bool told = false;
	pthread_mutex_lock(&sv->lock);
	while (!sv->stop && !sv->stopping) {
		pthread_mutex_unlock(&sv->lock);
		bool ready = sv->set.ready();
		if (ready && !told) {
			told = true;
			if (service_notify(sv->set.notify_socket, "READY=1\nSTATUS=serving") ==
			    SERVICE_FAILED)
				log_warn("systemd: cannot notify %s: %s", sv->set.notify_socket,
					 strerror(errno));
		}
		pthread_mutex_lock(&sv->lock);
		service_sleep(sv, told ? SERVICE_READY_EVERY_MS : SERVICE_READY_POLL_MS, true);
	}
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

static void *service_watchdog_run(void *arg)
{
	struct service *sv = arg;
	long every_ms = sv->set.watchdog_usec / 2000;
	every_ms = every_ms < 10 ? 10 : every_ms;
	long missed = 0;
	pthread_mutex_lock(&sv->lock);
	while (!sv->stop) {
		bool stopping = sv->stopping;
		pthread_mutex_unlock(&sv->lock);
		if (stopping ||
		    service_probe(sv->set.probe_host, sv->set.probe_port, every_ms / 2)) {
			if (missed)
				log_info("watchdog: the HTTP workers answer again after %ld missed "
					 "probe(s)",
					 missed);
			missed = 0;
			if (service_notify(sv->set.notify_socket, "WATCHDOG=1") == SERVICE_FAILED)
				log_debug("watchdog: cannot notify %s: %s", sv->set.notify_socket,
					  strerror(errno));
		} else if (missed++ == 0) {
			log_warn(
				"watchdog: GET /healthz through %s port %u not answered within %ld "
				"ms: no WATCHDOG=1 while it is not",
				sv->set.probe_host, sv->set.probe_port, every_ms / 2);
		}
		pthread_mutex_lock(&sv->lock);
		service_sleep(sv, every_ms, false);
	}
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

struct service *service_start(const struct service_settings *set)
{
	struct service *sv = mem_calloc(1, sizeof *sv);
	sv->set = *set;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sv->wake, &ca);
	pthread_condattr_destroy(&ca);
	mem_thread(&sv->readiness, service_readiness_run, sv, "readiness loop");
	sv->has_watchdog = set->watchdog_usec > 0 && set->notify_socket && *set->notify_socket;
	if (sv->has_watchdog)
		mem_thread(&sv->watchdog, service_watchdog_run, sv, "watchdog");
	return sv;
}

void service_stopping(struct service *sv)
{
	if (!sv)
		return;
	pthread_mutex_lock(&sv->lock);
	sv->stopping = true;
	pthread_cond_broadcast(&sv->wake);
	pthread_mutex_unlock(&sv->lock);
	if (service_notify(sv->set.notify_socket, "STOPPING=1\nSTATUS=draining") == SERVICE_FAILED)
		log_warn("systemd: cannot notify %s: %s", sv->set.notify_socket, strerror(errno));
}

void service_stop(struct service *sv)
{
	if (!sv)
		return;
	pthread_mutex_lock(&sv->lock);
	sv->stop = true;
	pthread_cond_broadcast(&sv->wake);
	pthread_mutex_unlock(&sv->lock);
	pthread_join(sv->readiness, NULL);
	if (sv->has_watchdog)
		pthread_join(sv->watchdog, NULL);
	pthread_cond_destroy(&sv->wake);
	pthread_mutex_destroy(&sv->lock);
	free(sv);
}
