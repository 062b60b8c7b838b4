/* The capabilities' rows of fleet.capabilities that `migrate` records (domain/pg/migrate.h),
 * written by hand until the build generates them from the capabilities' declarations: who may use
 * each capability, its scope and its confirmation policy. The catalogue, the procedures and the
 * views need no row: they read no business row of their own. */
#include "domain/pg/migrate.h"

#define STUB_READERS "viewer,customer_care,fleet_operator"

const struct migrate_capability migrate_capabilities[] = {
	{"bike_status", STUB_READERS, "fleet:read", false, "never"},
	{"status_codes", STUB_READERS, "fleet:read", false, "never"},
	{"cases", STUB_READERS, "fleet:read", false, "never"},
	{"damage_report", "customer_care,fleet_operator", "fleet:report", true, "client"},
};

const size_t migrate_capabilities_count =
	sizeof migrate_capabilities / sizeof migrate_capabilities[0];
