/* Forward-only numbered SQL migrations, applied by the server binary's `migrate` subcommand. */
#ifndef BIKAROO_MIGRATE_H
#define BIKAROO_MIGRATE_H

#include "domain/types.h"

/* Applies every NNNN_name.sql file of dir not yet recorded in fleet_meta.schema_migrations,
 * in order, each in its own transaction, under a session advisory lock so that concurrent
 * instances apply each file once. conninfo must name the owner role. *applied counts the
 * files applied now (0 when up to date). */
enum fleet_status migrate_run(const char *conninfo, const char *dir, int *applied)
	__attribute__((warn_unused_result));

#endif
