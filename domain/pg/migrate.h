/* Forward-only numbered SQL migrations and repeatable function files, applied by the server
 * binary's `migrate` subcommand (migrations/README.md). */
#ifndef BIKAROO_MIGRATE_H
#define BIKAROO_MIGRATE_H

#include <stdbool.h>

#include "domain/types.h"

/* The schema version this binary needs: the number of the highest NNNN_name.sql file of
 * migrations/ when it was built (the build derives it: scripts/schema-version.sh). */
int migrate_schema_needed(void);

/* The files one migrate run applied (both 0 when the schema was up to date). */
struct migrate_count {
	int numbered;  /* NNNN_name.sql files */
	int functions; /* schema.function.sql files, new or changed */
};

/* One capability as its declaration says who may use it, for fleet.capabilities (0018): the
 * roles (a comma list, e.g. "customer_care,fleet_operator"), the scope ("fleet:read" or
 * "fleet:report"), people only or not, and the confirmation policy ("never", "always", "client"
 * or "condition"). All strings static. */
struct migrate_capability {
	const char *name;
	const char *roles;
	const char *scope;
	bool people_only;
	const char *confirmation;
};

/* The capabilities this binary declares (generated from the declarations by the build; defined
 * outside domain/, which never reads them but through migrate_run). */
extern const struct migrate_capability migrate_capabilities[];
extern const size_t migrate_capabilities_count;

/* Under a session advisory lock, so that concurrent instances apply each file once:
 * 1. every NNNN_name.sql file of dir not yet recorded in fleet_meta.schema_migrations, in name
 *    order (a recorded name is never read again; a renamed file's names count as one);
 * 2. every schema.function.sql file of dir/functions whose SHA-256 differs from the one recorded
 *    in fleet_meta.schema_functions (or that has none), in name order;
 * 3. fleet.capabilities made caps[0..ncaps) exactly: every row upserted (changed only when it
 *    differs) and the rows of capabilities not among them deleted; a schema without that table
 *    (numbered files before 0018) is left as it is, said in the log.
 * Each numbered file runs in its own transaction with its record; the function files and step 3
 * run in one transaction together (all applied, or none). conninfo must name the owner role.
 * *applied counts the files applied now, of each kind. caps is borrowed. */
enum fleet_status migrate_run(const char *conninfo, const char *dir,
			      const struct migrate_capability *caps, size_t ncaps,
			      struct migrate_count *applied) __attribute__((warn_unused_result));

/* The highest numbered migration applied to the configured database (db.h's connection of the
 * calling thread, as the login role): FLEET_UNAVAILABLE when it cannot be reached,
 * FLEET_INTERNAL when it was never migrated. */
enum fleet_status migrate_schema_version(int *version) __attribute__((warn_unused_result));

#endif
