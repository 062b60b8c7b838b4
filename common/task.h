/* Calls that wait without holding their thread. A call runs as a task: a stack of its own, on
 * the thread of the loop that started it (common/loop.h), which it never leaves. When it waits
 * (task_wait: a database statement, a shared budget), the task parks and the loop goes on with
 * its other connections and calls; task_wake() makes it ready again and the loop resumes it at
 * its next turn. Code outside a task waits in its thread's private loop instead (start-up, the
 * admin commands, the tests); a serving loop's thread never waits outside a task, which
 * task_wait() enforces. What belongs to a call (its deadline, its span) lives in its task,
 * switched with it, never in a thread-local. */
#ifndef BIKAROO_TASK_H
#define BIKAROO_TASK_H

#include <stdatomic.h>
#include <stdbool.h>

#include "loop.h"

struct task;

/* One wait, on its waiter's stack: initialised by the waiter (it takes the waiter's loop), ended
 * by one task_wake(). */
struct task_wait {
	struct loop_job job; /* the wake-up, run on the waiter's loop */
	struct loop *loop;
	struct task *task; /* the task parked on it, or NULL */
	bool done;
	atomic_bool woken; /* task_wake was called */
};

void task_wait_init(struct task_wait *w);
/* Returns once task_wake(w) was called (at once if it already was). Outside a task it aborts on
 * a serving loop's thread, and inside a loop's job, hook or descriptor callback on any thread:
 * that code would wait for the loop it holds. */
void task_wait(struct task_wait *w);
/* Ends w's wait; from any thread, once: a second call aborts, and so does a wake-up that reaches
 * a parked task already woken. Nothing of w is touched after it from another thread but through
 * the waiter's loop. */
void task_wake(struct task_wait *w);

/* Runs fn(arg) as a new task of loop l, now, until it returns or waits. On l's thread, at its top
 * level (a loop callback, not inside another task). */
void task_start(struct loop *l, void (*fn)(void *arg), void *arg);
/* The loop the calling code's waits and statements go to: its task's, the loop this thread
 * serves, or the thread's private one. */
struct loop *task_loop(void);
/* Tasks of the calling thread's loop started and not returned (parked ones included). */
long task_live(void);
/* Frees the stacks this thread keeps for its next tasks: when its loop has ended (the idle list
 * is the thread's own, and would outlive it otherwise). */
void task_idle_free(void);

/* The running call's deadline (CLOCK_MONOTONIC ms; 0: none): its task's, or the thread's outside
 * a task. */
long long task_deadline(void);
/* Sets it: the call must end within ms milliseconds from now (ms <= 0: no deadline). */
void task_deadline_in(long ms);
/* Sets it to at (CLOCK_MONOTONIC ms; 0: none), e.g. back to what task_deadline() said. */
void task_deadline_at(long long at_ms);
/* Milliseconds left (0 once it passed), or cap when that is sooner or there is none. */
long task_deadline_left(long cap);
bool task_deadline_passed(void);

/* The span the running call is in (common/trace.h keeps it here, switched with the task): its
 * task's, or the thread's outside a task. */
void *task_span(void);
void task_set_span(void *span);

#endif
