/* libFuzzer target: an operator's CSV load file (server/cli/load.c over common/csv.c), the
 * input bikaroo-mcp admin load reads from outside. The first byte chooses the kind (regions,
 * stations, bikes); the rest is the file. Every file is either rows (each an object of strings
 * named by a column of the kind, the required ones not empty, one rising line number per row)
 * or refused with a reason, never both, never a crash or a leak. Seeds: tests/fuzz/corpus-csv/.
 * Build and run: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/cli/load.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_install_jansson();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = {"regions", "stations", "bikes"};
	if (size < 1)
		return 0;
	const char *kind = kinds[data[0] % 3];
	json_t *rows = NULL;
	unsigned long *lines = NULL;
	struct load_error err;
	if (load_rows(kind, (const char *)data + 1, size - 1, &rows, &lines, &err) != 0) {
		if (rows || lines || !err.what[0])
			abort(); /* refused: said, and nothing handed out */
		return 0;
	}
	size_t i;
	json_t *row;
	json_array_foreach (rows, i, row) {
		const char *name;
		json_t *v;
		if (!json_is_object(row) || lines[i] == 0 || (i > 0 && lines[i] <= lines[i - 1]))
			abort();
		json_object_foreach (row, name, v) {
			if (!json_is_string(v) || !load_column(kind, name))
				abort();
		}
		for (const struct load_column *c = load_columns(kind); c->name; c++)
			if (c->required && !*json_string_value(json_object_get(row, c->name)))
				abort(); /* a required column is there and not empty */
	}
	json_decref(rows);
	free(lines);
	/* How a message shows a value: bounded, whatever the bytes. */
	char *text = mem_strndup((const char *)data + 1, size - 1), shown[64];
	load_show(text, shown, sizeof shown);
	if (strlen(shown) >= sizeof shown)
		abort();
	free(text);
	return 0;
}
