/* Calls that wait without holding a thread (task.h): ucontext tasks on mmap'ed stacks with a
 * guard page, one ready queue per worker. A task parks in two steps (it says PARKING and
 * switches to its worker; the worker then makes it PARKED), and a wake-up that comes in between
 * finds PARKING and leaves the queuing to the worker: a task is never resumed before it has
 * switched out. AddressSanitizer and valgrind are told of every stack switch. */
#include "task.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "deadline.h"
#include "log.h"
#include "mem.h"

/* AddressSanitizer (GCC's -fsanitize=address defines __SANITIZE_ADDRESS__) is told of each
 * switch; valgrind (the `make valgrind` build defines TASK_VALGRIND: its header comes with the
 * test tier's packages, not the build's) of each stack. */
#if defined(__SANITIZE_ADDRESS__)
#define TASK_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef TASK_VALGRIND
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif

/* A task's stack: JSON bodies nest up to jansson's 2048 levels, parsed and freed recursively.
 * Only the pages a call touches are resident; a stack that went deeper than TASK_SHALLOW gives
 * the rest back when it is put aside (a canary word at that depth tells). */
#ifdef TASK_ASAN
#define TASK_STACK ((size_t)8 * 1024 * 1024)
#else
#define TASK_STACK ((size_t)2 * 1024 * 1024)
#endif
#define TASK_SHALLOW ((size_t)64 * 1024)
#define TASK_CANARY 0x7461736b63616e61ull
/* Stacks kept per worker for the next tasks. */
#define TASK_IDLE_MAX 32

enum { TASK_RUNNING, TASK_PARKING, TASK_PARKED, TASK_WOKEN };

struct task {
	ucontext_t ctx;
	char *map; /* the mapping: a guard page, then the stack */
	size_t map_size;
	char *stack;
	unsigned vg_id;
	void (*fn)(void *arg);
	void *arg;
	long long deadline; /* its call's deadline while others run on its thread */
	atomic_int state;
	bool finished;
	struct task_worker *worker;
	void *asan_fake;
	struct task *next; /* in a ready queue or the idle list */
};

struct task_worker {
	ucontext_t home;
	struct task *current;
	void (*notify)(void *arg);
	void *notify_arg;
	pthread_mutex_t lock; /* guards ready */
	struct task *ready, **ready_tail;
	atomic_bool any_ready;
	long live;
	struct task *idle;
	long nidle;
	const void *home_bottom; /* the thread's own stack, for AddressSanitizer */
	size_t home_size;
};

static _Thread_local struct task_worker *task_me;
/* Calls under way (tasks started and not returned), and how many of them wait. */
static atomic_long task_running, task_waiting;

/* ---- waits ------------------------------------------------------------------------------ */

void task_wait_init(struct task_wait *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->done = false;
	w->task = NULL;
}

void task_wait_destroy(struct task_wait *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

bool task_in(void)
{
	return task_me && task_me->current;
}

long task_busy(void)
{
	long n = atomic_load(&task_running) - atomic_load(&task_waiting);
	return n > 0 ? n : 0;
}

/* Queues t on its worker's ready list and tells the worker. */
static void task_push_ready(struct task_worker *wk, struct task *t, bool notify)
{
	t->next = NULL;
	pthread_mutex_lock(&wk->lock);
	bool first = wk->ready == NULL;
	*wk->ready_tail = t;
	wk->ready_tail = &t->next;
	atomic_store(&wk->any_ready, true);
	pthread_mutex_unlock(&wk->lock);
	/* The worker runs every ready task once it looks: told once, for the first. */
	if (notify && first && wk->notify)
		wk->notify(wk->notify_arg);
}

void task_wait(struct task_wait *w)
{
	struct task_worker *wk = task_me;
	struct task *t = wk ? wk->current : NULL;
	pthread_mutex_lock(&w->lock);
	if (w->done) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	atomic_fetch_add(&task_waiting, 1);
	if (!t) {
		/* Not a task: the thread waits. */
		while (!w->done)
			pthread_cond_wait(&w->cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		atomic_fetch_sub(&task_waiting, 1);
		return;
	}
	w->task = t;
	atomic_store(&t->state, TASK_PARKING);
	pthread_mutex_unlock(&w->lock);
	t->deadline = deadline_save();
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(&t->asan_fake, wk->home_bottom, wk->home_size);
#endif
	swapcontext(&t->ctx, &wk->home);
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(t->asan_fake, &wk->home_bottom, &wk->home_size);
#endif
	atomic_fetch_sub(&task_waiting, 1);
}

void task_wake(struct task_wait *w)
{
	pthread_mutex_lock(&w->lock);
	w->done = true;
	struct task *t = w->task;
	if (!t)
		pthread_cond_signal(&w->cond); /* with the lock held: w outlives the signal */
	pthread_mutex_unlock(&w->lock);
	if (!t)
		return;
	/* From here on only t is touched (w may be gone once t runs again). */
	for (;;) {
		int s = atomic_load(&t->state);
		if (s == TASK_PARKING && atomic_compare_exchange_weak(&t->state, &s, TASK_WOKEN))
			return; /* still switching out: its worker queues it */
		if (s == TASK_PARKED && atomic_compare_exchange_weak(&t->state, &s, TASK_WOKEN)) {
			task_push_ready(t->worker, t, true);
			return;
		}
	}
}

struct task_cond_waiter {
	struct task_wait wait;
	struct task_cond_waiter *next;
};

void task_cond_wait(struct task_cond *c, pthread_mutex_t *m)
{
	struct task_cond_waiter me = {.next = c->waiters};
	task_wait_init(&me.wait);
	/* On this stack until woken: a broadcast unlinks every waiter before it wakes it. */
	c->waiters = &me; // cppcheck-suppress autoVariables
	pthread_mutex_unlock(m);
	task_wait(&me.wait);
	task_wait_destroy(&me.wait);
	pthread_mutex_lock(m);
}

void task_cond_broadcast(struct task_cond *c)
{
	struct task_cond_waiter *x = c->waiters;
	c->waiters = NULL;
	while (x) {
		struct task_cond_waiter *next = x->next; /* x may be gone once woken */
		task_wake(&x->wait);
		x = next;
	}
}

/* ---- tasks ------------------------------------------------------------------------------- */

static struct task *task_new_stack(void)
{
	struct task *t = mem_calloc(1, sizeof *t);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	t->map_size = TASK_STACK + page;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (t->map == MAP_FAILED) {
		log_error("task: no memory for a stack of %zu bytes", t->map_size);
		abort();
	}
	/* The guard: a stack that overflows faults instead of writing over its neighbour. */
	if (mprotect(t->map, page, PROT_NONE) != 0) {
		log_error("task: cannot protect a stack's guard page");
		abort();
	}
	t->stack = t->map + page;
	*(uint64_t *)(t->stack + TASK_STACK - TASK_SHALLOW) = TASK_CANARY;
#ifdef TASK_VALGRIND
	t->vg_id = VALGRIND_STACK_REGISTER(t->stack, t->stack + TASK_STACK);
#endif
	return t;
}

static void task_free_stack(struct task *t)
{
#ifdef TASK_VALGRIND
	VALGRIND_STACK_DEREGISTER(t->vg_id);
#endif
	munmap(t->map, t->map_size);
	free(t);
}

/* A returned task's stack, kept for the next one (its deep pages given back) or freed. */
static void task_put_aside(struct task_worker *wk, struct task *t)
{
	if (wk->nidle >= TASK_IDLE_MAX) {
		task_free_stack(t);
		return;
	}
	uint64_t *canary = (uint64_t *)(t->stack + TASK_STACK - TASK_SHALLOW);
#ifdef TASK_VALGRIND
	/* Below the task's last stack pointer: valgrind holds it unaddressable once the frames that
	 * went that deep returned; the word is read from the worker's stack, on purpose. */
	VALGRIND_MAKE_MEM_DEFINED(canary, sizeof *canary);
#endif
	if (*canary != TASK_CANARY) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t deep = (TASK_STACK - TASK_SHALLOW) / page * page;
		madvise(t->stack, deep, MADV_DONTNEED);
		*canary = TASK_CANARY;
	}
	t->next = wk->idle;
	wk->idle = t;
	wk->nidle++;
}

/* Where every task begins, on its own stack: it runs its call, then returns to its worker for
 * good. A task never changes threads, so task_me is the thread's worker throughout. */
static void task_entry(void)
{
	struct task_worker *wk = task_me;
	struct task *t = wk->current;
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(NULL, &wk->home_bottom, &wk->home_size);
#endif
	t->fn(t->arg);
	t->finished = true;
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(NULL, wk->home_bottom, wk->home_size);
#endif
	setcontext(&wk->home);
	abort(); /* setcontext returns only when it failed */
}

/* Runs t on the calling worker until it returns or parks. */
static void task_enter(struct task_worker *wk, struct task *t)
{
	long long mine = deadline_save();
	wk->current = t;
	deadline_restore(t->deadline);
#ifdef TASK_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, t->stack, TASK_STACK);
#endif
	swapcontext(&wk->home, &t->ctx);
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	wk->current = NULL;
	deadline_restore(mine);
	if (t->finished) {
		wk->live--;
		atomic_fetch_sub(&task_running, 1);
		task_put_aside(wk, t);
		return;
	}
	/* It parked: PARKED from now on, unless it was woken while it switched out. */
	int s = TASK_PARKING;
	if (!atomic_compare_exchange_strong(&t->state, &s, TASK_PARKED))
		task_push_ready(wk, t, false);
}

void task_worker_begin(void (*notify)(void *arg), void *arg)
{
	struct task_worker *wk = mem_calloc(1, sizeof *wk);
	wk->notify = notify;
	wk->notify_arg = arg;
	pthread_mutex_init(&wk->lock, NULL);
	wk->ready_tail = &wk->ready;
	task_me = wk;
}

void task_worker_end(void)
{
	struct task_worker *wk = task_me;
	if (!wk)
		return;
	while (wk->idle) {
		struct task *t = wk->idle;
		wk->idle = t->next;
		task_free_stack(t);
	}
	pthread_mutex_destroy(&wk->lock);
	free(wk);
	task_me = NULL;
}

/* t's context: its own stack, beginning at task_entry. Apart, because getcontext() returns
 * twice: nothing of the caller's frame may live across it. */
static __attribute__((noinline)) void task_prepare(struct task *t)
{
	struct task *volatile tv = t;
	getcontext(&tv->ctx);
	tv->ctx.uc_stack.ss_sp = tv->stack;
	tv->ctx.uc_stack.ss_size = TASK_STACK;
	tv->ctx.uc_link = NULL;
	makecontext(&tv->ctx, task_entry, 0);
}

void task_start(void (*fn)(void *arg), void *arg)
{
	struct task_worker *wk = task_me;
	struct task *t = wk->idle;
	if (t) {
		wk->idle = t->next;
		wk->nidle--;
	} else {
		t = task_new_stack();
	}
	t->fn = fn;
	t->arg = arg;
	t->finished = false;
	t->deadline = 0;
	t->worker = wk;
	t->next = NULL;
	atomic_store(&t->state, TASK_RUNNING);
	task_prepare(t);
	wk->live++;
	atomic_fetch_add(&task_running, 1);
	task_enter(wk, t);
}

bool task_ready(void)
{
	return task_me && atomic_load(&task_me->any_ready);
}

void task_run_ready(void)
{
	struct task_worker *wk = task_me;
	for (;;) {
		pthread_mutex_lock(&wk->lock);
		struct task *t = wk->ready;
		if (t) {
			wk->ready = t->next;
			if (!wk->ready)
				wk->ready_tail = &wk->ready;
		} else {
			atomic_store(&wk->any_ready, false);
		}
		pthread_mutex_unlock(&wk->lock);
		if (!t)
			return;
		atomic_store(&t->state, TASK_RUNNING);
		task_enter(wk, t);
	}
}

long task_live(void)
{
	return task_me ? task_me->live : 0;
}
