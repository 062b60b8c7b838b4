/* The audit log's single-row writer: fleet.audit_as (the identity, then a row through the
 * narrowly scoped SECURITY DEFINER fleet.audit_record, in one round trip; the login role holds
 * no privilege on the table), and the split of request references for the reads' rows. */
#include "audit.h"

#include <stddef.h>
#include <string.h>

#include "common/log.h"
#include "domain/pg/db.h"

/* The columns, in fleet.audit_as parameter order. */
enum { AUDIT_FROM_ACTOR, AUDIT_FROM_ENTRY };
static const struct {
	int from;
	size_t offset;
} audit_fields[] = {
	{AUDIT_FROM_ACTOR, offsetof(struct fleet_actor, subject)},
	{AUDIT_FROM_ACTOR, offsetof(struct fleet_actor, client_id)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, tool)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, target)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, args_digest)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, outcome)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, detail)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, request_id)},
};
#define AUDIT_NFIELDS (sizeof audit_fields / sizeof audit_fields[0])

/* Field i of a row (borrowed, may be NULL). */
static const char *audit_field(const struct fleet_actor *actor, const struct audit_entry *e,
			       size_t i)
{
	if (audit_fields[i].from == AUDIT_FROM_ACTOR)
		return (const char *)actor + audit_fields[i].offset; /* char arrays */
	return *(const char *const *)((const char *)e + audit_fields[i].offset);
}

enum fleet_status audit_record(const struct fleet_actor *actor, const struct audit_entry *e)
{
	static const char sql[] = "SELECT fleet.audit_as($1, $2, $3, $4, $5, $6, $7, $8)";
	const char *params[AUDIT_NFIELDS];
	for (size_t i = 0; i < AUDIT_NFIELDS; i++)
		params[i] = audit_field(actor, e, i);
	struct db_error err;
	PGresult *res = db_exec_brief("audit_as", sql, AUDIT_NFIELDS, params, &err);
	if (!res) {
		/* Never the arguments themselves: they may carry personal data. */
		log_error("audit row for %s (%s) not written: %s", e->tool, e->outcome,
			  fleet_status_name(err.st));
		return err.st;
	}
	PQclear(res);
	return FLEET_OK;
}

void audit_ref_parts(const char *ref, struct audit_ref_part *trace, struct audit_ref_part *token,
		     struct audit_ref_part *id)
{
	*trace = *token = (struct audit_ref_part){NULL, 0};
	*id = (struct audit_ref_part){ref, ref ? strlen(ref) : 0};
	if (!ref)
		return;
	const char *s = ref;
	if (strspn(s, "0123456789abcdef") >= 32 && s[32] == ' ') {
		*trace = (struct audit_ref_part){s, 32};
		s += 33;
	}
	size_t kind = strncmp(s, "jti:", 4) == 0 ? 4 : strncmp(s, "sha256:", 7) == 0 ? 7 : 0;
	if (kind) {
		size_t n = kind;
		while (s[n] >= '!' && s[n] <= '~')
			n++;
		if (n > kind && s[n] == ' ') {
			*token = (struct audit_ref_part){s, n};
			s += n + 1;
		}
	}
	*id = (struct audit_ref_part){s, strlen(s)};
}
