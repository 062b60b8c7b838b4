/* The change feed over LISTEN/NOTIFY, and the process's one follower of it (see changes.h). */
#include "changes.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "domain/pg/db.h"

struct changes {
	PGconn *pg;
};

/* The rights generation (changes.h): bumped by the follower's thread, read by any. */
static atomic_ullong changes_rights_gen;
static atomic_bool changes_listening;

unsigned long long changes_rights_generation(bool *live)
{
	*live = atomic_load(&changes_listening);
	return atomic_load(&changes_rights_gen);
}

/* Whether the feed listens now; either way every rights read before is of another generation. */
static void changes_listening_is(bool live)
{
	atomic_store(&changes_listening, live);
	atomic_fetch_add(&changes_rights_gen, 1);
}

static struct changes *changes_open(void)
{
	PGconn *pg = db_open_listen();
	if (!pg)
		return NULL;
	PGresult *r = PQexec(pg, "LISTEN bikaroo_changes; LISTEN bikaroo_rights");
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		log_error("cannot LISTEN for changes: %s", PQresultErrorMessage(r));
	PQclear(r);
	if (!ok) {
		PQfinish(pg);
		return NULL;
	}
	struct changes *ch = mem_alloc(sizeof *ch);
	ch->pg = pg;
	changes_listening_is(true);
	return ch;
}

static int changes_fd(const struct changes *ch)
{
	return PQsocket(ch->pg);
}

/* A notification as a change; false when it is not one of ours. */
static bool changes_read(const PGnotify *n, struct change *c)
{
	*c = (struct change){0};
	if (strcmp(n->relname, "bikaroo_changes") == 0)
		c->entity = n->extra;
	else if (strcmp(n->relname, "bikaroo_rights") == 0 && strncmp(n->extra, "subject:", 8) == 0)
		c->subject = n->extra + 8;
	else if (strcmp(n->relname, "bikaroo_rights") == 0 && strncmp(n->extra, "client:", 7) == 0)
		c->client = n->extra + 7;
	return (c->entity || c->subject || c->client) && *n->extra;
}

static int changes_drain(struct changes *ch, void (*fn)(const struct change *c, void *arg),
			 void *arg)
{
	if (!PQconsumeInput(ch->pg) || PQstatus(ch->pg) != CONNECTION_OK)
		return -1;
	for (PGnotify *n; (n = PQnotifies(ch->pg)) != NULL; PQfreemem(n)) {
		/* Any rights change, a caller's or everyone's (a capability's row, a TRUNCATE),
		 * ends every cached rights before a listener hears of it. */
		bool rights = strcmp(n->relname, "bikaroo_rights") == 0;
		if (rights) {
			atomic_fetch_add(&changes_rights_gen, 1);
			metrics_add(&metrics_rights_changes, NULL, 1);
		}
		struct change c;
		if (changes_read(n, &c))
			fn(&c, arg);
		else if (!rights)
			log_warn("change feed: unreadable notification on %s", n->relname);
	}
	return 0;
}

static void changes_close(struct changes *ch)
{
	if (!ch)
		return;
	PQfinish(ch->pg);
	free(ch);
}

/* ---- the follower: a process singleton --------------------------------------------------- */

/* Listeners are ticked every second: each decides what is due (keep-alives, expiries). */
#define CHANGES_TICK_SECONDS 1

static struct {
	pthread_mutex_t lock;
	struct changes_listener *listeners;
	struct changes *first; /* opened with the first listener, then the thread's */
	bool running;
	pthread_t thread;
	int wake[2];
} changes_follower = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Tells every listener of one change (NULL: a gap). */
static void changes_tell_all(const struct change *c, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&changes_follower.lock);
	for (struct changes_listener *l = changes_follower.listeners; l; l = l->next)
		l->changed(c, l->arg);
	pthread_mutex_unlock(&changes_follower.lock);
}

static void changes_tick(void)
{
	pthread_mutex_lock(&changes_follower.lock);
	for (struct changes_listener *l = changes_follower.listeners; l; l = l->next)
		if (l->tick)
			l->tick(l->arg);
	pthread_mutex_unlock(&changes_follower.lock);
}

static void *changes_run(void *arg)
{
	(void)arg;
	struct changes *ch = changes_follower.first;
	bool gap = !ch;
	time_t last_tick = time(NULL);
	for (;;) {
		if (!ch && (ch = changes_open()) != NULL && gap) {
			log_info("change feed back: subscribers are told to read again");
			changes_tell_all(NULL, NULL);
		}
		struct pollfd p[2] = {{.fd = changes_follower.wake[0], .events = POLLIN},
				      {.fd = ch ? changes_fd(ch) : -1, .events = POLLIN}};
		/* Without a feed, try again every second. */
		if (poll(p, 2, 1000 * CHANGES_TICK_SECONDS) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (ch && p[1].revents && changes_drain(ch, changes_tell_all, NULL) != 0) {
			log_warn("change feed lost; reconnecting");
			changes_listening_is(false);
			changes_close(ch);
			ch = NULL;
			gap = true;
		}
		if (time(NULL) - last_tick >= CHANGES_TICK_SECONDS) {
			last_tick = time(NULL);
			changes_tick();
		}
	}
	changes_listening_is(false);
	changes_close(ch);
	return NULL;
}

/* Under the lock: the follower's thread started if need be, listening before this returns when
 * the database answers. The thread takes no signal, whoever starts it: the process's signals
 * are the main thread's (server/main.c). */
static void changes_start(void)
{
	if (!changes_follower.running && pipe(changes_follower.wake) == 0) {
		changes_follower.first = changes_open();
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		mem_thread(&changes_follower.thread, changes_run, NULL, "change feed");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		changes_follower.running = true;
	}
}

bool changes_follow(struct changes_listener *l)
{
	pthread_mutex_lock(&changes_follower.lock);
	bool known = false;
	for (struct changes_listener *k = changes_follower.listeners; k && !known; k = k->next)
		known = k->arg == l->arg;
	if (!known) {
		l->next = changes_follower.listeners;
		changes_follower.listeners = l;
	}
	changes_start();
	pthread_mutex_unlock(&changes_follower.lock);
	return !known;
}

void changes_watch(void)
{
	pthread_mutex_lock(&changes_follower.lock);
	changes_start();
	pthread_mutex_unlock(&changes_follower.lock);
}

struct changes_listener *changes_unfollow(const void *arg)
{
	struct changes_listener *gone = NULL;
	pthread_mutex_lock(&changes_follower.lock);
	for (struct changes_listener **p = &changes_follower.listeners; *p; p = &(*p)->next)
		if ((*p)->arg == arg) {
			gone = *p;
			*p = gone->next;
			break;
		}
	pthread_mutex_unlock(&changes_follower.lock);
	return gone;
}

void changes_stop(void)
{
	pthread_mutex_lock(&changes_follower.lock);
	bool running = changes_follower.running;
	changes_follower.running = false;
	pthread_mutex_unlock(&changes_follower.lock);
	if (!running)
		return;
	if (write(changes_follower.wake[1], "x", 1) != 1)
		log_warn("cannot stop the change feed: %s", strerror(errno));
	pthread_join(changes_follower.thread, NULL);
	close(changes_follower.wake[0]);
	close(changes_follower.wake[1]);
}
