/* The serve command's parts around the composition root (server/main.c wires the product and
 * the transport): what is checked before serving (authorization, the local identity, the login
 * role), readiness (/readyz, systemd), the wait for a database that was down at start, and
 * SIGHUP's reload of the settings marked [reloadable]. */
#ifndef BIKAROO_CLI_SERVE_H
#define BIKAROO_CLI_SERVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"
#include "server/cfg.h"

/* What serve knows before it serves. */
struct serve_start {
	bool local;               /* BIKAROO_AUTH=local: actor acts for every request */
	struct fleet_actor actor; /* local only */
	bool db_down;             /* unreachable at start: statements held, serve_wait_start() */
};

/* Authorization initialised, the local identity built, the database configured and checked
 * (its login role; in local mode, a development database or BIKAROO_LOCAL_ALLOW_ANY_DATABASE).
 * 0, or -1: logged, what it opened closed. */
int serve_prepare(const struct cfg *cfg, struct serve_start *s) __attribute__((warn_unused_result));

/* GET /readyz (http.h): the database answers as the login role with the schema this binary
 * needs, and in jwt mode the issuer's keys are loaded. */
void serve_ready(json_t *missing);
/* Whether everything serve_ready() checks is ready (service.h's readiness loop). */
bool serve_ready_now(void);
/* The numeric address a probe reaches listen at (loopback for "any"), in buf (cap bytes). */
const char *serve_probe_host(const char *listen, char *buf, size_t cap);

/* The log lines of a server that serves at port: where, as whom or with which tokens. */
void serve_log_serving(const struct cfg *cfg, const struct serve_start *s, unsigned port);
/* The requestState key ids (the sealing one, the accepted ones): an operator sees each step of
 * a rotation reach every instance. */
void serve_log_keys(void);

/* A database down at start: a thread checks it again with a back-off doubling from 250 ms up
 * to BIKAROO_DB_RETRY_MAX_MS (the local identity first, then the login role); what needs it is
 * answered 503 meanwhile. A refusal stops the server: SIGTERM to this process, and
 * serve_refused() true. */
struct serve_wait;
struct serve_wait *serve_wait_start(const struct cfg *cfg);
void serve_wait_stop(struct serve_wait *w); /* NULL: nothing */
bool serve_refused(void);

/* SIGHUP: the configuration read again as at start (environment, BIKAROO_SETTINGS_FILE, the
 * NAME_FILE secrets, argv's flags); the settings marked reloadable applied (the key ring, the
 * log level), every other one that changed since the start named as waiting for a restart.
 * What does not load, or a key ring refused, changes nothing (logged). Calls in flight go on:
 * each opens or seals its state with one whole ring. */
void serve_reload(const struct cfg *started, int argc, char **argv);

#endif
