/* Forward-only numbered SQL migrations and repeatable function files, applied by the server
 * binary's `migrate` subcommand (migrations/README.md). */
#ifndef BIKAROO_MIGRATE_H
#define BIKAROO_MIGRATE_H

#include "domain/types.h"

/* The schema version this binary needs: the number of the highest NNNN_name.sql file of
 * migrations/ when it was built (the build derives it: scripts/schema-version.sh). */
int migrate_schema_needed(void);

/* The files one migrate run applied (both 0 when the schema was up to date). */
struct migrate_count {
	int numbered;  /* NNNN_name.sql files */
	int functions; /* schema.function.sql files, new or changed */
};

/* Under a session advisory lock, so that concurrent instances apply each file once:
 * 1. every NNNN_name.sql file of dir not yet recorded in fleet_meta.schema_migrations, in name
 *    order (a recorded name is never read again; a renamed file's names count as one);
 * 2. every schema.function.sql file of dir/functions whose SHA-256 differs from the one recorded
 *    in fleet_meta.schema_functions (or that has none), in name order.
 * Each file runs in its own transaction with its record. conninfo must name the owner role.
 * *applied counts the files applied now, of each kind. */
enum fleet_status migrate_run(const char *conninfo, const char *dir, struct migrate_count *applied)
	__attribute__((warn_unused_result));

/* The highest numbered migration applied to the configured database (db.h's connection of the
 * calling thread, as the login role): FLEET_UNAVAILABLE when it cannot be reached,
 * FLEET_INTERNAL when it was never migrated. */
enum fleet_status migrate_schema_version(int *version) __attribute__((warn_unused_result));

#endif
