/* The acting identity outside a request's token: a configured local identity (BIKAROO_AUTH=local,
 * loopback or a development database only) and a stdio session's identity from its
 * environment. */
#ifndef BIKAROO_IDENTITY_H
#define BIKAROO_IDENTITY_H

#include "domain/types.h"

/* Builds a configured local identity from its subject, client application and scope string
 * (all borrowed); 0 on success, -1 (logged) when subject or client is empty or too long. */
int identity_local(const char *subject, const char *client, const char *scopes,
		   struct fleet_actor *out) __attribute__((warn_unused_result));

enum identity_status {
	IDENTITY_OK = 0,
	IDENTITY_NO_TOKEN,    /* token mode, but the token is empty */
	IDENTITY_INVALID,     /* the token is not valid for this server */
	IDENTITY_UNAVAILABLE, /* issuer or database unreachable: try again later */
	IDENTITY_REFUSED, /* local identity asked for, but the database is not a development one */
};

/* Where a stdio session's identity comes from (strings borrowed). */
struct identity_env {
	const char *token; /* BIKAROO_TOKEN */
	const char *local_subject, *local_client, *local_scopes;
	/* Whether the database is marked as a development one (the domain answers it; the
	 * composition root wires it in). */
	enum fleet_status (*development_db)(bool *dev);
	/* BIKAROO_LOCAL_ALLOW_ANY_DATABASE: the local identity on a database that is not a
	 * development one too (said loudly, each time). */
	bool any_database;
};

/* The principal of a stdio session, from the environment and never from the client: with
 * BIKAROO_AUTH=jwt or introspection, the token validated exactly like an HTTP bearer token
 * (auth_init() first); with BIKAROO_AUTH=local, the configured local identity, allowed only when
 * the database is a development one or env->any_database says so. *why (static) says why not.
 * The same rule for a server's local identity over HTTP (serve). */
enum identity_status identity_from_environment(const struct identity_env *env,
					       struct fleet_actor *out, const char **why)
	__attribute__((warn_unused_result));

#endif
