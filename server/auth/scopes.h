/* OAuth scopes: the space-separated scope string of a token (or of the configured local identity)
 * as enum fleet_scope bits. */
#ifndef BIKAROO_SCOPES_H
#define BIKAROO_SCOPES_H

#include "domain/types.h"

/* Parses a space-separated OAuth scope string into enum fleet_scope bits; unknown scopes are
 * ignored (they grant nothing), names are case-sensitive. */
unsigned scopes_parse(const char *scope);

#endif
