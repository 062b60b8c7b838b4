/* Event loops (loop.h): an epoll set, an eventfd that other threads' jobs ring, the jobs posted
 * from the loop's own thread in a list of their own (no lock, no system call), and the hooks
 * that run before each wait. Its rules are checks: the owner thread on every entry point, a
 * posted flag on every job (as nginx's ngx_post_event marks an event posted). */
#include "loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mem.h"

#define LOOP_EVENTS 64

struct loop {
	int ep;
	struct loop_fd wake;  /* the eventfd that other threads' jobs ring */
	pthread_mutex_t lock; /* guards remote */
	struct loop_job *remote, **remote_tail;
	struct loop_job *local, **local_tail;
	struct loop_hook *hooks;
	bool private_;
	bool nudged;  /* loop_nudge: the next wait does not block */
	bool turning; /* running a job, a hook or a descriptor's callback (loop_turning) */
	/* The thread that turns it, from its first turn on (before: whoever sets it up). */
	atomic_bool owned;
	pthread_t owner;
	struct {
		const void *key;
		void *value;
	} slots[LOOP_SLOTS];
};

static _Thread_local struct loop *loop_cur;  /* the loop this thread turns */
static _Thread_local struct loop *loop_mine; /* this thread's private loop */
static pthread_key_t loop_key;
static pthread_once_t loop_once = PTHREAD_ONCE_INIT;

long long loop_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The rule every entry point but loop_post holds: a loop's state is its thread's.
 * Another thread's touch would race with the loop's own (post a job instead). */
static void loop_owned(struct loop *l, const char *what)
{
	if (atomic_load_explicit(&l->owned, memory_order_relaxed) &&
	    !pthread_equal(l->owner, pthread_self())) {
		log_error("loop: %s from a thread that does not turn this loop", what);
		abort(); /* our bug */
	}
}

static void loop_woken(struct loop_fd *f, uint32_t events)
{
	(void)events;
	uint64_t v;
	if (read(f->fd, &v, sizeof v) < 0 && errno != EAGAIN)
		log_error("loop: wake-up: %s", strerror(errno));
}

struct loop *loop_new(void)
{
	struct loop *l = mem_calloc(1, sizeof *l);
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->wake =
		(struct loop_fd){.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), .ready = loop_woken};
	if (l->ep < 0 || l->wake.fd < 0) {
		log_error("loop: no epoll set or eventfd: %s", strerror(errno));
		abort();
	}
	pthread_mutex_init(&l->lock, NULL);
	l->remote_tail = &l->remote;
	l->local_tail = &l->local;
	if (loop_watch(l, &l->wake, EPOLLIN) != 0) {
		log_error("loop: cannot watch its eventfd: %s", strerror(errno));
		abort();
	}
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	loop_owned(l, "loop_free");
	for (struct loop_hook *h = l->hooks, *next; h; h = next) {
		next = h->next;
		if (h->end)
			h->end(h);
	}
	close(l->wake.fd);
	close(l->ep);
	pthread_mutex_destroy(&l->lock);
	if (loop_cur == l)
		loop_cur = NULL;
	free(l);
}

int loop_watch(struct loop *l, struct loop_fd *f, uint32_t events)
{
	loop_owned(l, "loop_watch");
	struct epoll_event ev = {.events = events, .data.ptr = f};
	if (epoll_ctl(l->ep, EPOLL_CTL_MOD, f->fd, &ev) == 0)
		return 0;
	return errno == ENOENT ? epoll_ctl(l->ep, EPOLL_CTL_ADD, f->fd, &ev) : -1;
}

void loop_unwatch(struct loop *l, struct loop_fd *f)
{
	loop_owned(l, "loop_unwatch");
	epoll_ctl(l->ep, EPOLL_CTL_DEL, f->fd, NULL);
}

void loop_hook(struct loop *l, struct loop_hook *h)
{
	loop_owned(l, "loop_hook");
	h->next = l->hooks;
	l->hooks = h;
}

void loop_unhook(struct loop *l, struct loop_hook *h)
{
	loop_owned(l, "loop_unhook");
	for (struct loop_hook **p = &l->hooks; *p; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			return;
		}
}

void *loop_get(struct loop *l, const void *key)
{
	loop_owned(l, "loop_get");
	for (int i = 0; i < LOOP_SLOTS && l->slots[i].key; i++)
		if (l->slots[i].key == key)
			return l->slots[i].value;
	return NULL;
}

void loop_set(struct loop *l, const void *key, void *value)
{
	loop_owned(l, "loop_set");
	for (int i = 0; i < LOOP_SLOTS; i++)
		if (!l->slots[i].key || l->slots[i].key == key) {
			l->slots[i].key = key;
			l->slots[i].value = value;
			return;
		}
	log_error("loop: more than %d slots", LOOP_SLOTS);
	abort(); /* a fixed set of modules keep something in a loop: our bug */
}

void loop_post(struct loop *l, struct loop_job *j)
{
	if (atomic_exchange(&j->posted, true)) {
		log_error("loop: a job posted again before it ran");
		abort(); /* our bug: the job would be lost, or run twice */
	}
	j->next = NULL;
	if (loop_cur == l) {
		*l->local_tail = j;
		l->local_tail = &j->next;
		return;
	}
	pthread_mutex_lock(&l->lock);
	bool first = l->remote == NULL;
	*l->remote_tail = j;
	l->remote_tail = &j->next;
	pthread_mutex_unlock(&l->lock);
	/* Rung once per batch of jobs: the loop takes them all when it wakes. */
	uint64_t one = 1;
	if (first && write(l->wake.fd, &one, sizeof one) < 0 && errno != EAGAIN)
		log_error("loop: cannot wake a loop: %s", strerror(errno));
}

/* Runs the jobs posted so far, those of other threads included, and those they post; whether
 * any ran. */
static bool loop_jobs(struct loop *l)
{
	bool ran = false;
	pthread_mutex_lock(&l->lock);
	if (l->remote) {
		*l->local_tail = l->remote;
		l->local_tail = l->remote_tail;
		l->remote = NULL;
		l->remote_tail = &l->remote;
	}
	pthread_mutex_unlock(&l->lock);
	while (l->local) {
		struct loop_job *j = l->local;
		l->local = j->next;
		if (!l->local)
			l->local_tail = &l->local;
		atomic_store(&j->posted,
			     false); /* it may post itself again, or be freed, as it runs */
		j->run(j);
		ran = true;
	}
	return ran;
}

void loop_nudge(struct loop *l)
{
	loop_owned(l, "loop_nudge");
	l->nudged = true;
}

void loop_turn(struct loop *l, bool wait)
{
	if (!atomic_load_explicit(&l->owned, memory_order_relaxed)) {
		l->owner = pthread_self();
		atomic_store(&l->owned, true);
	}
	loop_owned(l, "loop_turn");
	loop_cur = l;
	l->turning = true;
	/* A turn whose jobs ran does not wait: what its caller waits for may have happened. */
	bool ran = loop_jobs(l);
	long long now = loop_now_ms(), due = 0;
	for (struct loop_hook *h = l->hooks; h; h = h->next) {
		long long d = h->due(h, now);
		if (d && (!due || d < due))
			due = d;
	}
	int timeout = -1;
	if (!wait || ran || l->local || l->nudged)
		timeout = 0;
	else if (due)
		timeout = due <= now ? 0 : due - now > 60000 ? 60000 : (int)(due - now);
	l->nudged = false;
	struct epoll_event ev[LOOP_EVENTS];
	l->turning = false;
	int n = epoll_wait(l->ep, ev, LOOP_EVENTS, timeout);
	if (n < 0 && errno != EINTR)
		log_error("loop: epoll_wait: %s", strerror(errno));
	l->turning = true;
	for (int i = 0; i < n; i++) {
		struct loop_fd *f = ev[i].data.ptr;
		f->ready(f, ev[i].events);
	}
	l->turning = false;
}

struct loop *loop_self(void)
{
	return loop_cur ? loop_cur : loop_mine;
}

bool loop_serving(void)
{
	return loop_cur && !loop_cur->private_;
}

bool loop_turning(void)
{
	return loop_cur && loop_cur->turning;
}

static void loop_thread_exit(void *p)
{
	struct loop *l = p;
	loop_mine = l;
	loop_private_free();
}

static void loop_key_make(void)
{
	pthread_key_create(&loop_key, loop_thread_exit);
}

struct loop *loop_private(void)
{
	if (loop_mine)
		return loop_mine;
	pthread_once(&loop_once, loop_key_make);
	loop_mine = loop_new();
	loop_mine->private_ = true;
	pthread_setspecific(loop_key, loop_mine);
	return loop_mine;
}

void loop_private_free(void)
{
	struct loop *l = loop_mine;
	if (!l)
		return;
	loop_cur = l; /* its hooks' ends may post and wait on it */
	loop_mine = NULL;
	pthread_setspecific(loop_key, NULL);
	loop_free(l);
	loop_cur = NULL;
}
