/* libFuzzer target: the JSON Schema validator (server/protocol/schema.c) on tool arguments, which
 * come from clients. The first byte chooses the input's use. Even: the rest is the arguments
 * (JSON), validated against each of the product's published input schemas (its tools'); when
 * report_damaged_bike's accepts them, the harness checks again its own way what that schema
 * promises (bikeId's form, the enum, the lengths in characters) and aborts if the validator let
 * through what the schema refuses. Odd: a schema (JSON without its patterns: a schema is ours,
 * not a client's, and its patterns are compiled from our files), NUL, then arguments: whatever
 * schema_check() admits is then loaded and run on the arguments. Every refusal must leave a
 * message. Build and run: make fuzz. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "gen/capabilities.h"
#include "server/protocol/schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fz_published[] = {"get_bike_status", "report_damaged_bike"};
#define FZ_NPUBLISHED (sizeof fz_published / sizeof fz_published[0])

/* The input schema the catalogue publishes for tool, or NULL. */
static const char *fz_input(const char *tool)
{
	for (size_t c = 0; c < capabilities_count; c++)
		for (size_t t = 0; t < capabilities_all[c]->ntools; t++)
			if (strcmp(capabilities_all[c]->tools[t].name, tool) == 0)
				return capabilities_all[c]->tools[t].input_schema;
	return NULL;
}
static json_t *fz_schemas[FZ_NPUBLISHED];
static struct schema_set *fz_patterns;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_install_jansson();
	fz_patterns = schema_set_new();
	for (size_t i = 0; i < FZ_NPUBLISHED; i++) {
		json_error_t e;
		char msg[256];
		const char *text = fz_input(fz_published[i]);
		fz_schemas[i] = text ? json_loads(text, JSON_REJECT_DUPLICATES, &e) : NULL;
		if (!fz_schemas[i] || !schema_check(fz_schemas[i], msg, sizeof msg) ||
		    schema_set_add(fz_patterns, fz_schemas[i]) != 0)
			abort();
	}
	return 0;
}

/* Runs the validator; a refusal must say why, in a NUL-terminated message. */
static bool fz_validate(const struct schema_set *set, const json_t *schema, const json_t *v)
{
	char msg[256];
	memset(msg, 'x', sizeof msg);
	bool ok = schema_validate(set, schema, v, msg, sizeof msg);
	if (!ok && (!memchr(msg, '\0', sizeof msg) || !*msg))
		abort();
	return ok;
}

static size_t fz_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* What report_damaged_bike's inputSchema promises of arguments it admits. */
static bool fz_report_args_sound(const json_t *a)
{
	const char *bike = json_string_value(json_object_get(a, "bikeId"));
	const char *issue = json_string_value(json_object_get(a, "issue"));
	const json_t *desc = json_object_get(a, "description");
	const json_t *key = json_object_get(a, "idempotencyKey");
	const json_t *cid = json_object_get(a, "caseId");
	size_t bl = bike ? strlen(bike) : 0;
	if (!bike || bl < 7 || bl > 9 || strncmp(bike, "VL-", 3) != 0 ||
	    strspn(bike + 3, "0123456789") != bl - 3 || !issue || json_object_size(a) > 5)
		return false;
	static const char *const issues[] = {"rear_wheel_blocked", "flat_tire",     "brake_failure",
					     "chain_broken",       "battery_fault", "frame_damage",
					     "lighting_fault",     "other"};
	bool known = false;
	for (size_t i = 0; i < sizeof issues / sizeof issues[0]; i++)
		known = known || strcmp(issue, issues[i]) == 0;
	if (!known)
		return false;
	if (desc && (!json_is_string(desc) || fz_chars(json_string_value(desc)) > 2000))
		return false;
	if (key && (!json_is_string(key) || fz_chars(json_string_value(key)) < 1 ||
		    fz_chars(json_string_value(key)) > 200))
		return false;
	if (cid && (!json_is_string(cid) || strncmp(json_string_value(cid), "IC-", 3) != 0))
		return false;
	return true;
}

/* Removes every "pattern" member of a schema, at any depth. */
static void fz_strip_patterns(json_t *s, int depth)
{
	if (!json_is_object(s) || depth > 64)
		return;
	json_object_del(s, "pattern");
	const char *k;
	json_t *v;
	json_object_foreach (s, k, v)
		if (json_is_object(v))
			fz_strip_patterns(v, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	json_error_t e;
	if (!(data[0] & 1)) {
		json_t *args = json_loadb(p, n, JSON_REJECT_DUPLICATES, &e);
		if (!args)
			return 0;
		for (size_t i = 0; i < FZ_NPUBLISHED; i++)
			if (fz_validate(fz_patterns, fz_schemas[i], args) &&
			    strcmp(fz_published[i], "report_damaged_bike") == 0 &&
			    !fz_report_args_sound(args))
				abort(); /* admitted what the published schema refuses */
		json_decref(args);
		return 0;
	}
	const char *nul = memchr(p, '\0', n);
	if (!nul)
		return 0;
	json_t *schema = json_loadb(p, (size_t)(nul - p), JSON_REJECT_DUPLICATES, &e);
	json_t *args = json_loadb(nul + 1, n - (size_t)(nul + 1 - p),
				  JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
	fz_strip_patterns(schema, 0);
	char msg[256];
	if (schema && args && schema_check(schema, msg, sizeof msg)) {
		struct schema_set *set = schema_set_new();
		if (schema_set_add(set, schema) == 0)
			(void)fz_validate(set, schema, args);
		schema_set_free(set);
	}
	json_decref(args);
	json_decref(schema);
	return 0;
}
