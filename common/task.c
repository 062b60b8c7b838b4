/* Tasks (task.h): stacks mmap'ed with a guard page, run and resumed by their loop at its
 * top level. A wake-up from the task's own thread queues its resumption as a job of the loop; one
 * from another thread goes through loop_post(), so a task is only ever resumed by its own
 * thread, after it has switched out. AddressSanitizer and valgrind are told of every switch. */
#include "task.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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
/* Stacks kept per thread for the next tasks. */
#define TASK_IDLE_MAX 32

/* ---- switches ----------------------------------------------------------------------------- */

/* A switched-out stack. On x86-64, a switch is a dozen instructions: the callee-saved registers and
 * the floating-point control state pushed on the stack left, its pointer kept, the other's popped.
 * No system call: swapcontext() also set the signal mask, one rt_sigprocmask per switch, five per
 * call, a tenth of the server's CPU per read (bench/README.md, "Decisions"); the mask is the
 * thread's, the same for all its tasks. Elsewhere ucontext (TASK_UCONTEXT; `make unit` runs the
 * core tests with it too). */
#if defined(__x86_64__) && !defined(TASK_UCONTEXT)
struct task_ctx {
	void *sp;
};

void task_switch_sp(void **from, void *to);
__asm__(".text\n"
	".globl task_switch_sp\n"
	".hidden task_switch_sp\n"
	".type task_switch_sp, @function\n"
	".p2align 4\n"
	"task_switch_sp:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tsubq $8, %rsp\n\tstmxcsr (%rsp)\n\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n\tfldcw 4(%rsp)\n\taddq $8, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size task_switch_sp, .-task_switch_sp\n");

static void task_switch(struct task_ctx *from, const struct task_ctx *to)
{
	task_switch_sp(&from->sp, to->sp);
}

/* c begins entry on stack[0..size) at its first switch-in: the stack as task_switch_sp leaves a
 * switched-out one, returning into entry as if called (16-aligned before the call). */
static void task_make(struct task_ctx *c, char *stack, size_t size, void (*entry)(void))
{
	void **sp = (void **)((uintptr_t)(stack + size) & ~(uintptr_t)15);
	*--sp = NULL;                     /* entry's own return address: it never returns */
	*--sp = (void *)(uintptr_t)entry; /* where task_switch_sp returns */
	for (int i = 0; i < 6; i++)
		*--sp = NULL; /* rbp, rbx, r12-r15 */
	--sp;
	((uint32_t *)sp)[0] = 0x1f80; /* MXCSR as the ABI begins a program */
	((uint16_t *)sp)[2] = 0x037f; /* the x87 control word likewise */
	c->sp = sp;
}
#else
#include <ucontext.h>

struct task_ctx {
	ucontext_t uc;
};

static void task_switch(struct task_ctx *from, const struct task_ctx *to)
{
	swapcontext(&from->uc, &to->uc);
}

/* Apart, because getcontext() returns twice: nothing of the caller's frame may live across it. */
static __attribute__((noinline)) void task_make(struct task_ctx *c, char *stack, size_t size,
						void (*entry)(void))
{
	struct task_ctx *volatile cv = c;
	getcontext(&cv->uc);
	cv->uc.uc_stack.ss_sp = stack;
	cv->uc.uc_stack.ss_size = size;
	cv->uc.uc_link = NULL;
	makecontext(&cv->uc, entry, 0);
}
#endif

/* ---- tasks -------------------------------------------------------------------------------- */

struct task {
	struct task_ctx ctx;
	char *map; /* the mapping: a guard page, then the stack */
	size_t map_size;
	char *stack;
	unsigned vg_id;
	void (*fn)(void *arg);
	void *arg;
	long long deadline;
	void *span; /* task_span() */
	bool finished;
	bool woken;             /* parked, and its wait's wake-up reached it: it runs next */
	struct loop_job resume; /* its resumption, queued on its loop */
	void *asan_fake;
	struct task *next; /* in the idle list */
};

/* A thread's side of its tasks: where they switch back to, and their spare stacks. */
struct task_home {
	struct task_ctx ctx;
	struct task *current;
	struct task *idle;
	long nidle, live;
	long long deadline; /* of the code outside any task */
	void *span;         /* likewise */
	const void *bottom; /* the thread's own stack, for AddressSanitizer */
	size_t size;
};

static _Thread_local struct task_home task_home_;

/* ---- deadlines ---------------------------------------------------------------------------- */

static long long *task_deadline_of_running(void)
{
	struct task_home *h = &task_home_;
	return h->current ? &h->current->deadline : &h->deadline;
}

long long task_deadline(void)
{
	return *task_deadline_of_running();
}

void task_deadline_in(long ms)
{
	task_deadline_at(ms > 0 ? loop_now_ms() + ms : 0);
}

void task_deadline_at(long long at_ms)
{
	*task_deadline_of_running() = at_ms;
}

long task_deadline_left(long cap)
{
	long long at = task_deadline();
	if (!at)
		return cap;
	long long left = at - loop_now_ms();
	if (left <= 0)
		return 0;
	return left < cap ? (long)left : cap;
}

bool task_deadline_passed(void)
{
	long long at = task_deadline();
	return at && loop_now_ms() >= at;
}

void *task_span(void)
{
	struct task_home *h = &task_home_;
	return h->current ? h->current->span : h->span;
}

void task_set_span(void *span)
{
	struct task_home *h = &task_home_;
	*(h->current ? &h->current->span : &h->span) = span;
}

/* Frees task t and its stack. */
static void task_drop(struct task *t)
{
#ifdef TASK_VALGRIND
	VALGRIND_STACK_DEREGISTER(t->vg_id);
#endif
	munmap(t->map, t->map_size);
	free(t);
}

/* Runs t on its thread until it returns or parks; at the loop's top level. */
static void task_enter(struct task *t)
{
	struct task_home *h = &task_home_;
	h->current = t;
#ifdef TASK_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, t->stack, TASK_STACK);
#endif
	task_switch(&h->ctx, &t->ctx);
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	h->current = NULL;
	if (!t->finished)
		return; /* parked: its wake-up queues t->resume */
	h->live--;
	if (h->nidle >= TASK_IDLE_MAX) {
		task_drop(t);
		return;
	}
	uint64_t *canary = (uint64_t *)(t->stack + TASK_STACK - TASK_SHALLOW);
#ifdef TASK_VALGRIND
	/* Below the task's last stack pointer: valgrind holds it unaddressable once the frames that
	 * went that deep returned; the word is read from the thread's stack, on purpose. */
	VALGRIND_MAKE_MEM_DEFINED(canary, sizeof *canary);
#endif
	if (*canary != TASK_CANARY) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		madvise(t->stack, (TASK_STACK - TASK_SHALLOW) / page * page, MADV_DONTNEED);
		*canary = TASK_CANARY;
	}
	t->next = h->idle;
	h->idle = t;
	h->nidle++;
}

static void task_resumed(struct loop_job *j)
{
	task_enter((struct task *)((char *)j - offsetof(struct task, resume)));
}

/* The wake-up of t's wait has reached t, on its thread: once per park (a task woken twice would
 * run from the middle of another wait, or after it ended). */
static void task_woken_once(struct task *t)
{
	if (t->woken) {
		log_error("task: a parked task woken twice");
		abort(); /* our bug */
	}
	t->woken = true;
}

/* Parks the running task: back to its thread's loop until its resumption runs. */
static void task_park(struct task *t)
{
	struct task_home *h = &task_home_;
	t->woken = false;
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(&t->asan_fake, h->bottom, h->size);
#endif
	task_switch(&t->ctx, &h->ctx);
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(t->asan_fake, &h->bottom, &h->size);
#endif
}

/* Where every task begins, on its own stack: it runs its call, then leaves for good. */
static void task_entry(void)
{
	struct task_home *h = &task_home_;
	struct task *t = h->current;
#ifdef TASK_ASAN
	__sanitizer_finish_switch_fiber(NULL, &h->bottom, &h->size);
#endif
	t->fn(t->arg);
	t->finished = true;
#ifdef TASK_ASAN
	__sanitizer_start_switch_fiber(NULL, h->bottom, h->size);
#endif
	task_switch(&t->ctx, &h->ctx);
	abort(); /* a finished task is never switched back to */
}

static struct task *task_new(void)
{
	struct task_home *h = &task_home_;
	struct task *t = h->idle;
	if (t) {
		h->idle = t->next;
		h->nidle--;
		return t;
	}
	t = mem_calloc(1, sizeof *t);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	t->map_size = TASK_STACK + page;
	t->map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	/* The guard: a stack that overflows faults instead of writing over its neighbour. */
	if (t->map == MAP_FAILED || mprotect(t->map, page, PROT_NONE) != 0) {
		log_error("task: no memory for a stack of %zu bytes", t->map_size);
		abort();
	}
	t->stack = t->map + page;
	*(uint64_t *)(t->stack + TASK_STACK - TASK_SHALLOW) = TASK_CANARY;
#ifdef TASK_VALGRIND
	t->vg_id = VALGRIND_STACK_REGISTER(t->stack, t->stack + TASK_STACK);
#endif
	return t;
}

void task_start(struct loop *l, void (*fn)(void *arg), void *arg)
{
	struct task_home *h = &task_home_;
	if (h->current || loop_self() != l) {
		log_error("task_start: not at the top level of the loop's own thread");
		abort(); /* our bug */
	}
	struct task *t = task_new();
	t->fn = fn;
	t->arg = arg;
	t->finished = false;
	t->woken = false;
	t->deadline = 0;
	t->span = NULL;
	t->resume = (struct loop_job){.run = task_resumed};
	task_make(&t->ctx, t->stack, TASK_STACK, task_entry);
	h->live++;
	task_enter(t);
}

struct loop *task_loop(void)
{
	struct loop *l = loop_self();
	return l ? l : loop_private();
}

long task_live(void)
{
	return task_home_.live;
}

void task_idle_free(void)
{
	struct task_home *h = &task_home_;
	while (h->idle) {
		struct task *t = h->idle;
		h->idle = t->next;
		task_drop(t);
	}
	h->nidle = 0;
}

/* ---- waits -------------------------------------------------------------------------------- */

void task_wait_init(struct task_wait *w)
{
	*w = (struct task_wait){.loop = task_loop()};
}

void task_wait(struct task_wait *w)
{
	struct task *t = task_home_.current;
	if (w->done)
		return;
	if (t) {
		w->task = t;
		task_park(t);
		return;
	}
	if (loop_serving() || loop_turning()) {
		log_error("task_wait: outside a task, %s waits",
			  loop_serving() ? "a serving loop's thread" : "a loop's callback");
		abort(); /* our bug: it would wait for the loop it holds */
	}
	while (!w->done)
		loop_turn(w->loop, true);
}

/* A wake-up from another thread, now on the waiter's. */
static void task_woken(struct loop_job *j)
{
	struct task_wait *w = (struct task_wait *)((char *)j - offsetof(struct task_wait, job));
	struct task *t = w->task;
	w->done = true;
	if (t) {
		task_woken_once(t);
		task_enter(t); /* w may be gone after this */
	}
}

void task_wake(struct task_wait *w)
{
	if (atomic_exchange(&w->woken, true)) {
		log_error("task_wake: a wait woken twice");
		abort(); /* our bug: its waiter may be gone, or waiting for something else */
	}
	if (loop_self() != w->loop) {
		w->job.run = task_woken;
		loop_post(w->loop, &w->job);
		return;
	}
	w->done = true;
	if (w->task) {
		task_woken_once(w->task);
		loop_post(w->loop, &w->task->resume);
	} else
		loop_nudge(w->loop); /* a thread that waits in its loop: it sees done at once */
}
