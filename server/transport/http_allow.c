/* Host and Origin allow-lists (http_allow.h). */
#include "http_allow.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static bool http_name_in(const char *name, size_t n, const char *list)
{
	static const char loopback[][10] = {"localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < 3; i++)
		if (strlen(loopback[i]) == n && strncasecmp(name, loopback[i], n) == 0)
			return true;
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		if (len == n && n && strncasecmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Length of the host part of "host[:port]" ("[v6]" keeps its brackets); 0 if malformed. */
static size_t http_host_part(const char *hp)
{
	if (hp[0] == '[') {
		const char *close = strchr(hp, ']');
		if (!close || (close[1] && close[1] != ':'))
			return 0;
		return (size_t)(close - hp + 1);
	}
	size_t n = strcspn(hp, ":");
	if (hp[n] == ':')
		for (const char *p = hp + n + 1; *p; p++)
			if (*p < '0' || *p > '9')
				return 0;
	return n;
}

bool http_host_allowed(const char *host_port, const char *extra)
{
	if (!host_port || !*host_port || strlen(host_port) > 255)
		return false;
	size_t n = http_host_part(host_port);
	return n && http_name_in(host_port, n, extra);
}

bool http_origin_allowed(const char *origin, const char *extra)
{
	const char *p;
	if (strncasecmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else
		return false; /* includes the literal "null" */
	if (strchr(p, '/') || strlen(p) > 255)
		return false;
	size_t n = http_host_part(p);
	return n && http_name_in(p, n, extra);
}
