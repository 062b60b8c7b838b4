/* OAuth scopes as the domain's scope bits (see scopes.h). */
#include "scopes.h"

#include <string.h>

unsigned scopes_parse(const char *scope)
{
	unsigned bits = 0;
	for (const char *p = scope; p && *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n == 10 && strncmp(p, "fleet:read", n) == 0)
			bits |= FLEET_SCOPE_READ;
		else if (n == 12 && strncmp(p, "fleet:report", n) == 0)
			bits |= FLEET_SCOPE_REPORT;
		p += n;
	}
	return bits;
}
