/* Compact JSON writer for jansson values (jsonw.h). */
#include "jsonw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

/* Bytes that need an escape: '"', '\\' and the control characters. */
static const unsigned char jsonw_escape[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1,  ['\\'] = 1,
};

void jsonw_string(struct mem_buf *b, const char *s, size_t n)
{
	mem_buf_put(b, "\"", 1);
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!jsonw_escape[c])
			continue;
		mem_buf_put(b, s + start, i - start);
		start = i + 1;
		char esc[8];
		size_t len = 2;
		switch (c) {
		case '"': memcpy(esc, "\\\"", 2); break;
		case '\\': memcpy(esc, "\\\\", 2); break;
		case '\b': memcpy(esc, "\\b", 2); break;
		case '\f': memcpy(esc, "\\f", 2); break;
		case '\n': memcpy(esc, "\\n", 2); break;
		case '\r': memcpy(esc, "\\r", 2); break;
		case '\t': memcpy(esc, "\\t", 2); break;
		default: /* as jansson: \u and four upper-case hex digits */
			snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c);
			len = 6;
			break;
		}
		mem_buf_put(b, esc, len);
	}
	mem_buf_put(b, s + start, n - start);
	mem_buf_put(b, "\"", 1);
}

/* A real as jansson writes it (jsonp_dtostr): %.17g, a ".0" when that reads as an integer, no
 * '+' and no leading zeros in the exponent. */
static void jsonw_real(struct mem_buf *b, double v)
{
	char t[64];
	int n = snprintf(t, sizeof t, "%.17g", v);
	if (n < 0 || (size_t)n >= sizeof t - 3)
		return;
	for (char *p = t; *p; p++)
		if (*p == ',') /* a locale's decimal comma */
			*p = '.';
	if (!strchr(t, '.') && !strchr(t, 'e')) {
		memcpy(t + n, ".0", 3);
		n += 2;
	}
	char *e = strchr(t, 'e');
	if (e) {
		char *start = e + 1, *end = e + 2;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, strlen(end) + 1);
			n = (int)strlen(t);
		}
	}
	mem_buf_put(b, t, (size_t)n);
}

void jsonw_value(struct mem_buf *b, const json_t *v)
{
	char num[32];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		mem_buf_put(b, "{", 1);
		const char *key;
		size_t klen;
		json_t *item;
		bool first = true;
		/* json_object_keylen_foreach is not in every jansson: iterate by hand (the
		 * object is not changed while it is written). */
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			key = json_object_iter_key(it);
			klen = json_object_iter_key_len(it);
			item = json_object_iter_value(it);
			if (!first)
				mem_buf_put(b, ",", 1);
			first = false;
			jsonw_string(b, key, klen);
			mem_buf_put(b, ":", 1);
			jsonw_value(b, item);
		}
		mem_buf_put(b, "}", 1);
		break;
	}
	case JSON_ARRAY: {
		mem_buf_put(b, "[", 1);
		size_t n = json_array_size(v);
		for (size_t i = 0; i < n; i++) {
			if (i)
				mem_buf_put(b, ",", 1);
			jsonw_value(b, json_array_get(v, i));
		}
		mem_buf_put(b, "]", 1);
		break;
	}
	case JSON_STRING: jsonw_string(b, json_string_value(v), json_string_length(v)); break;
	case JSON_INTEGER: {
		int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		mem_buf_put(b, num, (size_t)n);
		break;
	}
	case JSON_REAL: jsonw_real(b, json_real_value(v)); break;
	case JSON_TRUE: mem_buf_put(b, "true", 4); break;
	case JSON_FALSE: mem_buf_put(b, "false", 5); break;
	case JSON_NULL: mem_buf_put(b, "null", 4); break;
	}
}

char *jsonw_dump(const json_t *v)
{
	if (!v)
		return NULL;
	struct mem_buf b = {0};
	jsonw_value(&b, v); /* every value writes at least one byte: b.p is set */
	return b.p;
}
