/* The caller's rights as the business database states them (role, regions, is_human, the client
 * application's rights, its confirmation policy), and the rules that judge them. These C checks
 * are the second line behind row-level security; both must agree. */
#ifndef BIKAROO_RIGHTS_H
#define BIKAROO_RIGHTS_H

#include "types.h"

struct rights {
	bool known; /* an active subject through an active client application */
	bool human;
	bool client_read;
	bool client_report;
	bool confirm; /* the client application must have reports confirmed */
	char role[32];
	char regions[FLEET_TEXT_MAX]; /* PostgreSQL array text, e.g. {FR-LYO,FR-PAR} */
};

struct pg_result; /* libpq's PGresult: the domain's statements hand it in, nothing else */

/* Reads the caller's rights from row 0 of res, from the columns every fleet.*_as function
 * returns: prefix (e.g. "" or "out_") followed by role, regions, is_human, client_may_read,
 * client_may_report, requires_confirmation. FLEET_INTERNAL (logged) when one is missing. */
enum fleet_status rights_read_row(const struct pg_result *res, const char *what, const char *prefix,
				  struct rights *r) __attribute__((warn_unused_result));

/* The same from fields already split, in that order (role, regions, is_human, client_may_read,
 * client_may_report, requires_confirmation; NULL: an SQL NULL). */
void rights_from_fields(const char *const *v, struct rights *r);

/* Whether actor with rights r may use a capability of scope (enum fleet_scope bit: the token's,
 * and the client application's right for it: client_read for fleet:read, client_report for
 * fleet:report), roles (comma-separated, as its declaration lists them; NULL: any) and
 * people_only (a known person acting in person, never a machine client). A known subject
 * always. */
bool rights_may_use(const struct fleet_actor *actor, const struct rights *r, unsigned scope,
		    const char *roles, bool people_only);

/* True when region is an element of regions, a PostgreSQL text array literal such as
 * {FR-LYO,FR-PAR} (the perimeter fleet.act_as() returns). Both borrowed. */
bool rights_in_perimeter(const char *regions, const char *region);

/* The scopes actor may use with rights r (reads.h reads_rights), as enum fleet_scope bits: the
 * token's scopes ∩ the client application's rights, for a known subject; fleet:report never for
 * a machine client. Each capability's roles and people_only still apply (rights_may_use), and
 * perimeters per object. */
unsigned rights_scopes(const struct fleet_actor *actor, const struct rights *r);

/* The caller's rights, as read(actor, r) states them (reads.h reads_rights: the database, one
 * unit), or as the calling code's loop read them for the same subject and client when no
 * committed rights change has been heard since (changes.h, the rights generation) and the
 * change feed listened all along; without a feed, read every time and never kept. A loop keeps
 * at most a few hundred callers' rights, on its own thread. For the lists and the catalogue:
 * a change is seen once its notification (sent at commit) is heard; the calls themselves judge
 * their rights in the database as they run. FLEET_OK with *r set, or read's failure. */
enum fleet_status rights_known(const struct fleet_actor *actor, struct rights *r,
			       enum fleet_status (*read)(const struct fleet_actor *actor,
							 struct rights *r))
	__attribute__((warn_unused_result));

/* True in *dev when the database's owner marked it as a development database
 * (fleet.settings environment = development). On a connection of its own, opened and closed
 * here: it answers while statements are held until the login role is checked
 * (db_hold_until_checked), so that a local identity is judged before anything is served. */
enum fleet_status rights_development_db(bool *dev) __attribute__((warn_unused_result));

#endif
