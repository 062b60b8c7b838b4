/* Bikes: the shape of a bike id (bikes.h). */
#include "bikes.h"

#include <string.h>

bool bikes_id_valid(const char *id)
{
	if (strncmp(id, "VL-", 3) != 0)
		return false;
	size_t n = 0;
	for (const char *p = id + 3; *p; p++, n++)
		if (*p < '0' || *p > '9')
			return false;
	return n >= 4 && n <= 6;
}
