/* The audit log writer for calls decided outside the database: one round trip of
 * fleet.audit_as, which fixes the identity and appends a row through the narrowly scoped
 * SECURITY DEFINER fleet.audit_record (the login role holds no privilege on the table). */
#include "audit.h"

#include <string.h>

#include "common/log.h"
#include "domain/pg/db.h"

enum fleet_status audit_record(const struct fleet_actor *actor, const struct audit_entry *e)
{
	static const char sql[] = "SELECT fleet.audit_as($1, $2, $3, $4, $5, $6, $7, $8)";
	const char *params[8] = {actor->subject, actor->client_id, e->tool,   e->target,
				 e->args_digest, e->outcome,       e->detail, e->request_id};
	enum fleet_status st;
	PGresult *res = db_exec_prepared("audit_as", sql, 8, params, &st);
	if (!res) {
		/* Never the arguments themselves: they may carry personal data. */
		log_error("audit row for %s (%s) not written: %s", e->tool, e->outcome,
			  fleet_status_name(st));
		return st;
	}
	PQclear(res);
	return FLEET_OK;
}
