/* The deadline of the call a thread is running: set by the transport when a call begins (the
 * HTTP workers, BIKAROO_CALL_TIMEOUT_MS), read by whatever waits on its behalf (the database
 * statements of domain/pg/db.c). Per thread, so it needs no lock: one process-wide
 * thread-local value, the only state of this module. */
#ifndef BIKAROO_DEADLINE_H
#define BIKAROO_DEADLINE_H

#include <stdbool.h>

/* From now on this thread's call must end within ms milliseconds (ms <= 0: no deadline). */
void deadline_start(long ms);
/* The call ended: no deadline on this thread. */
void deadline_clear(void);
/* Milliseconds left before this thread's deadline (0 once it passed), or cap when that is
 * sooner or there is none. */
long deadline_left_ms(long cap);
/* Whether this thread has a deadline and it passed. */
bool deadline_passed(void);
/* This thread's deadline as it stands (CLOCK_MONOTONIC ms, 0: none), and setting it back: the
 * calls that take turns on one thread (common/task.h) each keep their own. */
long long deadline_save(void);
void deadline_restore(long long at_ms);

#endif
