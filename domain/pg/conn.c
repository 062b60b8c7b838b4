/* What every connection shares (conn.h). */
#include "conn.h"

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"

static char *conn_conninfo;
static char *conn_listen_conninfo;
static bool conn_is_pooled;
static long conn_timeout;
static long conn_nper_loop = 2;
/* CLOCK_MONOTONIC milliseconds of the last statement that timed out and of the last that
 * answered (conn_stalled). */
static atomic_llong conn_timed_out_at, conn_answered_at;
static atomic_bool conn_holding; /* conn_hold */

void conn_configure(const char *conninfo, const char *listen_conninfo, bool pooled, long timeout_ms,
		    long per_loop)
{
	conn_free();
	conn_conninfo = mem_strdup(conninfo ? conninfo : "");
	conn_listen_conninfo =
		mem_strdup(listen_conninfo && *listen_conninfo ? listen_conninfo : conn_conninfo);
	conn_is_pooled = pooled;
	conn_timeout = timeout_ms > 0 ? timeout_ms : 0;
	conn_nper_loop = per_loop > 0 ? per_loop : 2;
}

void conn_free(void)
{
	free(conn_conninfo);
	conn_conninfo = NULL;
	free(conn_listen_conninfo);
	conn_listen_conninfo = NULL;
}

const char *conn_info(void)
{
	return conn_conninfo ? conn_conninfo : "";
}

const char *conn_listen_info(void)
{
	return conn_listen_conninfo ? conn_listen_conninfo : conn_info();
}

bool conn_pooled(void)
{
	return conn_is_pooled;
}

long conn_timeout_ms(void)
{
	return conn_timeout;
}

long conn_per_loop(void)
{
	return conn_nper_loop;
}

long long conn_deadline_ms(void)
{
	long cap = conn_timeout > 0 ? conn_timeout : 24L * 3600 * 1000;
	long left = task_deadline_left(cap);
	if (left == cap && conn_timeout <= 0)
		return 0;
	return loop_now_ms() + left;
}

void conn_hold(bool held)
{
	atomic_store(&conn_holding, held);
}

bool conn_held(void)
{
	return atomic_load(&conn_holding);
}

static void conn_notice_quiet(void *arg, const char *message)
{
	(void)arg;
	log_debug("postgres: %s", message);
}

/* Defaults a configured conninfo overrides (it is expanded after them, as dbname): a peer that
 * vanishes over TCP (no reset, a black hole) fails the connection's next use within about a
 * minute instead of the kernel's hours. Unix-socket connections ignore them. */
static const char *const conn_keys[] = {"keepalives",
					"keepalives_idle",
					"keepalives_interval",
					"keepalives_count",
					"tcp_user_timeout",
					"dbname",
					NULL};
#define CONN_VALUES(conninfo)                                                                      \
	{                                                                                          \
		"1", "30", "10", "3", "60000", (conninfo) ? (conninfo) : "", NULL                  \
	}

void conn_failed(const char *why)
{
	static struct log_limit limit;
	unsigned long skipped;
	char again[64] = "";
	if (!log_due(&limit, 60, &skipped))
		return;
	if (skipped)
		snprintf(again, sizeof again, " (and %lu times since the last line)", skipped);
	log_error("database connection failed%s: %s", again, why);
}

PGconn *conn_start(const char *conninfo)
{
	const char *values[] = CONN_VALUES(conninfo);
	return PQconnectStartParams(conn_keys, values, 1);
}

PGconn *conn_open(const char *conninfo)
{
	const char *values[] = CONN_VALUES(conninfo);
	PGconn *pg = PQconnectdbParams(conn_keys, values, 1);
	if (PQstatus(pg) != CONNECTION_OK) {
		conn_failed(PQerrorMessage(pg));
		PQfinish(pg);
		conn_count_error("connect");
		return NULL;
	}
	PQsetNoticeProcessor(pg, conn_notice_quiet, NULL);
	return pg;
}

void conn_ready(PGconn *pg)
{
	PQsetNoticeProcessor(pg, conn_notice_quiet, NULL);
	PQsetnonblocking(pg, 1);
}

bool conn_idle_alive(PGconn *pg)
{
	/* The server's last words (a FATAL error) and the end of the stream may need two reads. */
	for (int k = 0; k < 3; k++) {
		struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN};
		if (poll(&p, 1, 0) <= 0)
			return true;
		if (!PQconsumeInput(pg) || PQstatus(pg) != CONNECTION_OK)
			return false;
		for (PGnotify *n; (n = PQnotifies(pg)) != NULL;)
			PQfreemem(n);
	}
	return true;
}

void conn_close(PGconn *pg)
{
	if (!pg)
		return;
	/* Non-blocking: a frozen path cannot hold the goodbye. */
	PQsetnonblocking(pg, 1);
	PQfinish(pg);
}

enum fleet_status conn_status(const PGresult *res, PGconn *pg)
{
	if (PQstatus(pg) != CONNECTION_OK)
		return FLEET_UNAVAILABLE;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state && strncmp(state, "08", 2) == 0)
		return FLEET_UNAVAILABLE; /* connection exception */
	/* Operator intervention (a statement timeout or cancel, an administrator's shutdown, a
	 * server that cannot take connections now) and a lock timeout: not now, rolled back. */
	if (state && (strncmp(state, "57", 2) == 0 || strcmp(state, "55P03") == 0))
		return FLEET_UNAVAILABLE;
	return FLEET_INTERNAL;
}

bool conn_cancelled(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	return state && (strcmp(state, "57014") == 0 || strcmp(state, "55P03") == 0);
}

void conn_count_error(const char *kind)
{
	const char *v[] = {kind};
	metrics_add(&metrics_db_errors, v, 1);
}

void conn_note_timeout(void)
{
	atomic_store(&conn_timed_out_at, loop_now_ms());
}

void conn_note_answer(void)
{
	atomic_store(&conn_answered_at, loop_now_ms());
}

bool conn_stalled(void)
{
	long long out = atomic_load(&conn_timed_out_at);
	return out && out >= atomic_load(&conn_answered_at) && loop_now_ms() - out < 30000;
}

bool conn_prepared_has(const struct conn_prepared *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (p->name[i] == name || strcmp(p->name[i], name) == 0)
			return true;
	return false;
}

void conn_prepared_add(struct conn_prepared *p, const char *name)
{
	if (p->n < CONN_MAX_PREPARED)
		p->name[p->n++] = name;
}

void conn_prepared_forget(struct conn_prepared *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->name[i], name) == 0)
			p->name[i] = p->name[--p->n];
}
