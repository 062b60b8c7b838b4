/* The acting identity: scope parsing, the configured local identity (BIKAROO_AUTH=local,
 * loopback only), and the identity of a stdio session taken from the environment. */
#ifndef BIKAROO_IDENTITY_H
#define BIKAROO_IDENTITY_H

#include "domain/types.h"
#include "server/cfg.h"

/* Parses a space-separated OAuth scope string into enum fleet_scope bits; unknown scopes are
 * ignored (they grant nothing). */
unsigned identity_parse_scopes(const char *scope);

/* Builds the configured local identity; 0 on success, -1 (logged) when it is not usable. */
int identity_local(const struct cfg *cfg, struct fleet_actor *out)
	__attribute__((warn_unused_result));

enum identity_status {
	IDENTITY_OK = 0,
	IDENTITY_NO_TOKEN,    /* token mode, but BIKAROO_TOKEN is empty */
	IDENTITY_INVALID,     /* the token is not valid for this server */
	IDENTITY_UNAVAILABLE, /* issuer or database unreachable: try again later */
	IDENTITY_REFUSED, /* local identity asked for, but the database is not a development one */
};

/* The principal of a stdio session, from the environment and never from the client: with
 * BIKAROO_AUTH=jwt or introspection, BIKAROO_TOKEN validated exactly like an HTTP bearer token
 * (auth_init() first); with BIKAROO_AUTH=local, the configured local identity, allowed only when
 * the database is marked as a development database (db_configure() first). *why is static. */
enum identity_status identity_from_environment(const struct cfg *cfg, struct fleet_actor *out,
					       const char **why)
	__attribute__((warn_unused_result));

#endif
