/* Event loops: one thread, one epoll set. What a loop watches (descriptors), what runs before
 * each of its waits (hooks) and what it owns (slots) are touched on its thread only: once a
 * thread has turned a loop, every function below that takes a loop but loop_post aborts on any
 * other thread (before its first turn, the thread that makes it sets it up). Jobs are the one
 * way in from other threads (loop_post). The HTTP transport runs one loop per core, each owning
 * its connections, its database connections and its batches (docs/concurrency.md); a thread
 * that runs no loop (start-up, the admin commands, the tests) gets a private one of its own the
 * first time it waits (common/task.h), so that every wait goes through a loop. */
#ifndef BIKAROO_LOOP_H
#define BIKAROO_LOOP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct loop;

/* A descriptor a loop watches, embedded in its owner's struct. */
struct loop_fd {
	int fd;
	/* On the loop's thread, with the epoll events that came. */
	void (*ready)(struct loop_fd *f, uint32_t events);
};

/* Work handed to a loop, embedded in its owner's struct; posted again only once it has run (a
 * job posted while it waits to run aborts: it would be lost, or run twice). */
struct loop_job {
	void (*run)(struct loop_job *j); /* on the loop's thread, at its top level */
	struct loop_job *next;
	atomic_bool posted; /* the loop's: from loop_post until it runs */
};

/* Called at each turn of the loop, before it waits, on its thread: does what is due by now_ms
 * and returns when it must be called again at the latest (CLOCK_MONOTONIC ms; 0: only at the
 * next turn that events bring). end (may be NULL) is called when the loop is freed. */
struct loop_hook {
	long long (*due)(struct loop_hook *h, long long now_ms);
	void (*end)(struct loop_hook *h);
	struct loop_hook *next;
};

/* A new loop (not running yet; the thread that first turns it owns it). Aborts when the kernel
 * refuses an epoll set (no descriptor left: the program cannot work). */
struct loop *loop_new(void);
/* Calls every hook's end, then frees the loop. On its thread, or once it no longer runs. */
void loop_free(struct loop *l);

/* Watches f->fd for events (EPOLLIN, EPOLLOUT...; again: changes them). 0, or -1 (errno). */
int loop_watch(struct loop *l, struct loop_fd *f, uint32_t events);
void loop_unwatch(struct loop *l, struct loop_fd *f);
void loop_hook(struct loop *l, struct loop_hook *h);
/* Takes h out of l's hooks (its end is not called). */
void loop_unhook(struct loop *l, struct loop_hook *h);

/* What the owner of key (the address of one of its statics) keeps in this loop (NULL: nothing
 * yet); set once, on the loop's thread. At most LOOP_SLOTS keys per loop. */
#define LOOP_SLOTS 8
void *loop_get(struct loop *l, const void *key);
void loop_set(struct loop *l, const void *key, void *value);

/* Runs j on l's thread soon, after what was posted before it. From any thread; from l's own it
 * costs no system call. Aborts when j is posted already and has not run yet. */
void loop_post(struct loop *l, struct loop_job *j);

/* From l's own thread: its next wait does not block (something its caller waits for happened
 * outside a job, e.g. in a hook). */
void loop_nudge(struct loop *l);

/* One turn: the jobs posted, the hooks, then the events that come (waiting for them, up to the
 * hooks' next due time, when wait is set and no job ran or is left: a turn that ran jobs returns
 * at once, so that its caller sees what they did). */
void loop_turn(struct loop *l, bool wait);

/* The loop the calling thread turns (its own or the private one), or NULL. */
struct loop *loop_self(void);
/* Whether the calling thread is a loop's that serves others (not a private one). */
bool loop_serving(void);
/* Whether the calling thread runs a job, a hook or a descriptor's callback of its loop now. */
bool loop_turning(void);
/* The calling thread's private loop, made on first use, freed when the thread exits (for a
 * thread that runs no loop of its own and waits: task_wait()). */
struct loop *loop_private(void);
/* Frees the calling thread's private loop now, if any (its hooks end: e.g. its database
 * connections close). */
void loop_private_free(void);

long long loop_now_ms(void); /* CLOCK_MONOTONIC */

#endif
