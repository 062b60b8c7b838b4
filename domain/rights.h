/* The caller's rights as the business database states them: the first six columns of every
 * *_as function (role, regions, is_human, client_may_read, client_may_report,
 * requires_confirmation), read and judged in one place. These C checks are the second line
 * behind row-level security; both must agree. Only domain/ includes this header. */
#ifndef BIKAROO_RIGHTS_H
#define BIKAROO_RIGHTS_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "fleet.h"

struct rights {
	bool known; /* an active subject through an active client application */
	bool human;
	bool client_read;
	bool client_report;
	bool confirm; /* the client application must have reports confirmed */
	char role[32];
	char regions[FLEET_TEXT_MAX]; /* PostgreSQL array text, e.g. {FR-LYO,FR-PAR} */
};

/* Reads columns 0..5 of row 0 of res. */
void rights_read(PGresult *res, struct rights *r);
/* Reading needs the token's fleet:read, a known subject (every role reads) and a client
 * application allowed to read. */
bool rights_may_read(const struct fleet_actor *actor, const struct rights *r);
/* Reporting needs the token's fleet:report, a known human subject (never a machine client)
 * whose role reports, and a client application allowed to report. */
bool rights_may_report(const struct fleet_actor *actor, const struct rights *r);

#endif
