/* Deployment-wide token buckets (budgets.h): leases through fleet.budget_take. */
#include "budgets.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "domain/pg/db.h"

/* The bucket's key: SHA-256 (hex) of its kind, its size and rate, and its holder. No subject or
 * client id is stored, the array literal needs no escaping, and a budget configured anew is a
 * new bucket (instances configured alike share one). */
static void budgets_key(const struct fleet_budget_lease *l, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	char *in = mem_printf("%c%c:%.17g:%.17g:%s", l->client ? 'c' : 's', l->write ? 'w' : 'r',
			      l->burst, l->per_s, l->holder);
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)in, strlen(in), md);
	free(in);
	for (size_t i = 0; i < sizeof md; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

enum fleet_status budgets_take(struct fleet_budget_lease *l, size_t n)
{
	static const char sql[] = "SELECT granted, level FROM fleet.budget_take($1::text[], "
				  "$2::integer[], $3::double precision[], $4::double precision[])";
	static const char *const names[] = {"granted", "level"};
	char keys[BUDGETS_MAX_LEASES * 67 + 3], want[BUDGETS_MAX_LEASES * 22 + 3];
	char per_s[BUDGETS_MAX_LEASES * 26 + 3], burst[BUDGETS_MAX_LEASES * 26 + 3];
	if (n == 0 || n > BUDGETS_MAX_LEASES)
		return FLEET_INVALID;
	size_t kn = 0, wn = 0, pn = 0, bn = 0;
	for (size_t i = 0; i < n; i++) {
		char key[65];
		budgets_key(&l[i], key);
		const char *sep = i ? "," : "{";
		kn += (size_t)snprintf(keys + kn, sizeof keys - kn, "%s%s", sep, key);
		wn += (size_t)snprintf(want + wn, sizeof want - wn, "%s%ld", sep, l[i].want);
		pn += (size_t)snprintf(per_s + pn, sizeof per_s - pn, "%s%.17g", sep, l[i].per_s);
		bn += (size_t)snprintf(burst + bn, sizeof burst - bn, "%s%.17g", sep, l[i].burst);
	}
	snprintf(keys + kn, sizeof keys - kn, "}");
	snprintf(want + wn, sizeof want - wn, "}");
	snprintf(per_s + pn, sizeof per_s - pn, "}");
	snprintf(burst + bn, sizeof burst - bn, "}");
	const char *params[4] = {keys, want, per_s, burst};
	struct db_error err;
	PGresult *res = db_exec("budget_take", sql, 4, params, &err);
	if (!res)
		return strcmp(err.sqlstate, "22023") == 0 ? FLEET_INVALID : FLEET_UNAVAILABLE;
	int col[2];
	enum fleet_status st = FLEET_INTERNAL;
	if (db_columns(res, "budget_take", names, 2, col) != FLEET_OK || PQntuples(res) != (int)n)
		goto out;
	for (size_t i = 0; i < n; i++) {
		l[i].granted = strtol(PQgetvalue(res, (int)i, col[0]), NULL, 10);
		l[i].level = strtod(PQgetvalue(res, (int)i, col[1]), NULL);
	}
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}
