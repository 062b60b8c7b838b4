/* An operator's changes (bikaroo-mcp admin): the database roles, regions, stations and bikes,
 * principals and client applications, through the fleet.admin_* functions of
 * migrations/functions/ (each audited in fleet.admin_log, callable by the owner role only). One
 * connection per session, opened with the conninfo the caller gives. */
#ifndef BIKAROO_DOMAIN_ADMIN_H
#define BIKAROO_DOMAIN_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

struct admin_session;

/* Why the last call failed, for the operator: the database's message on one line, with a hint
 * when the role may not do this. Borrowed from s, valid until its next call. */
const char *admin_why(const struct admin_session *s);

/* What the database named about the last failure ("" for what it did not name), for words of
 * the operator's own: the SQLSTATE, the table, column and constraint (PostgreSQL's names, e.g.
 * bikes, battery_pct, bikes_battery_pct_check), and for a load the row it refused (1-based, 0
 * when none). Borrowed from s, valid until its next call. */
struct admin_failure {
	char sqlstate[6];
	char table[64], column[64], constraint[64];
	long row;
};
const struct admin_failure *admin_failure(const struct admin_session *s);

/* Opens a session on conninfo (new: admin_close). FLEET_UNAVAILABLE when it cannot connect
 * (admin_why says why). */
enum fleet_status admin_open(const char *conninfo, struct admin_session **out)
	__attribute__((warn_unused_result));
void admin_close(struct admin_session *s);

/* As a superuser (or a role with CREATEROLE and CREATEDB): the owner role fleet_owner (LOGIN,
 * not superuser, no BYPASSRLS) and the server's login role fleet_app (LOGIN, not superuser, no
 * BYPASSRLS, CREATEDB or CREATEROLE), created when missing and given those attributes, with
 * their passwords when not empty (sent hashed: PQencryptPasswordConn); then database dbname
 * owned by fleet_owner. */
enum fleet_status admin_create_roles(struct admin_session *s, const char *dbname,
				     const char *owner_password, const char *app_password)
	__attribute__((warn_unused_result));
/* As a superuser connected to the new database: nobody but its owner creates in schema public. */
enum fleet_status admin_lock_public(struct admin_session *s) __attribute__((warn_unused_result));

/* Regions, stations or bikes (kind) from rows_json, a JSON array of objects; *count rows. All or
 * nothing: a row the database refuses is named in admin_failure()'s row. */
enum fleet_status admin_load(struct admin_session *s, const char *kind, const char *rows_json,
			     long *count) __attribute__((warn_unused_result));
enum fleet_status admin_region(struct admin_session *s, const char *code, const char *name)
	__attribute__((warn_unused_result));
/* regions: a PostgreSQL array literal's elements, comma-separated ("FR-PAR,FR-LYO"). */
enum fleet_status admin_principal(struct admin_session *s, const char *subject,
				  const char *display_name, const char *role, bool is_human,
				  const char *regions) __attribute__((warn_unused_result));
enum fleet_status admin_client(struct admin_session *s, const char *client_id, const char *name,
			       bool may_read, bool may_report, bool requires_confirmation)
	__attribute__((warn_unused_result));
/* kind "subject" or "client"; *found false when there is none by that id. */
enum fleet_status admin_deactivate(struct admin_session *s, const char *kind, const char *id,
				   bool *found) __attribute__((warn_unused_result));

#endif
