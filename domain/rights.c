/* The caller's rights, read from the *_as functions' first columns (see rights.h). */
#include "rights.h"

#include <string.h>

#include "db.h"

void rights_read(PGresult *res, struct rights *r)
{
	memset(r, 0, sizeof *r);
	r->known = !PQgetisnull(res, 0, 0);
	db_copy(r->role, sizeof r->role, PQgetvalue(res, 0, 0));
	db_copy(r->regions, sizeof r->regions, PQgetvalue(res, 0, 1));
	r->human = db_true(res, 0, 2);
	r->client_read = db_true(res, 0, 3);
	r->client_report = db_true(res, 0, 4);
	r->confirm = db_true(res, 0, 5);
}

bool rights_may_read(const struct fleet_actor *actor, const struct rights *r)
{
	return (actor->scopes & FLEET_SCOPE_READ) && r->known && r->client_read;
}

bool rights_may_report(const struct fleet_actor *actor, const struct rights *r)
{
	bool role_reports =
		strcmp(r->role, "customer_care") == 0 || strcmp(r->role, "fleet_operator") == 0;
	return (actor->scopes & FLEET_SCOPE_REPORT) && r->known && role_reports && r->human &&
	       !actor->machine && r->client_report;
}
