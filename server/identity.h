/* The acting identity of a request, before the authorization issue's token validation:
 * a configured local identity (loopback only). */
#ifndef BIKAROO_IDENTITY_H
#define BIKAROO_IDENTITY_H

#include "../domain/fleet.h"
#include "cfg.h"

/* Parses a space-separated OAuth scope string into enum fleet_scope bits; unknown scopes are
 * ignored (they grant nothing). */
unsigned identity_parse_scopes(const char *scope);

/* Builds the configured local identity; 0 on success, -1 (logged) when it is not usable. */
int identity_local(const struct cfg *cfg, struct fleet_actor *out)
	__attribute__((warn_unused_result));

#endif
