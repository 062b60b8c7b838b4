/* Leveled, printf-checked logging to stderr (stdout is the stdio transport's wire). */
#include "log.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Read by every thread, set at start and again on SIGHUP (serve): atomic, relaxed (a line
 * written at the old level while the new one is set is fine). */
static _Atomic int log_threshold = LOG_INFO;
static atomic_bool log_json;
static const char *const log_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level level)
{
	atomic_store_explicit(&log_threshold, (int)level, memory_order_relaxed);
}

bool log_enabled(enum log_level level)
{
	return (int)level >= atomic_load_explicit(&log_threshold, memory_order_relaxed);
}

void log_set_json(bool json)
{
	atomic_store_explicit(&log_json, json, memory_order_relaxed);
}

enum log_level log_get_level(void)
{
	return (enum log_level)atomic_load_explicit(&log_threshold, memory_order_relaxed);
}

bool log_get_json(void)
{
	return atomic_load_explicit(&log_json, memory_order_relaxed);
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (int i = 0; i < 4; i++) {
		if (strcmp(s, log_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

static void log_stamp(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000));
}

/* One JSON line of o (stolen), with ts and level first. */
static void log_json_line(enum log_level level, json_t *o)
{
	char ts[80];
	log_stamp(ts, sizeof ts);
	json_t *line = json_pack("{s:s, s:s}", "ts", ts, "level", log_names[level]);
	json_object_update(line, o);
	json_decref(o);
	char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(line);
	if (text)
		fprintf(stderr, "%s\n", text);
	free(text);
}

void log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
{
	if (!log_enabled(level))
		return;
	char line[1024];
	int n = 0;
	if (!log_json) {
		char ts[80];
		log_stamp(ts, sizeof ts);
		n = snprintf(line, sizeof line, "%s %-5s ", ts, log_names[level]);
		if (reqid && n >= 0 && (size_t)n < sizeof line)
			n += snprintf(line + n, sizeof line - (size_t)n, "[%s] ", reqid);
	}
	if (n >= 0 && (size_t)n < sizeof line) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* One write per line so that concurrent workers do not interleave. */
	if (log_json) {
		json_t *o = json_object();
		if (reqid)
			json_object_set_new(o, "reqid", json_string(reqid));
		/* Invalid UTF-8 (a libpq message in another encoding) is replaced, not lost. */
		json_t *msg = json_string(line);
		/* A message cut at the line's end may end inside a character: that part goes. */
		for (size_t len = strlen(line), k = 0; !msg && len && k < 3; k++) {
			line[--len] = '\0';
			msg = json_string(line);
		}
		json_object_set_new(o, "msg", msg ? msg : json_string("(not UTF-8)"));
		log_json_line(level, o);
		return;
	}
	char safe[4 * sizeof line];
	log_escape(line, safe, sizeof safe);
	fprintf(stderr, "%s\n", safe);
}

/* A line break that libpq's layout puts in its messages ("...refused\n\tIs the server
 * running...?\n", "\nDETAIL:  ...", "\nHINT:  ..."): read as a space in a text line. It cannot
 * forge a line (it becomes a space), so it is safe whoever wrote it; any other break is escaped. */
static bool log_soft_break(const char *p)
{
	static const char *const next[] = {
		"\t", "DETAIL:  ", "HINT:  ", "CONTEXT:  ", "LINE ", NULL};
	for (int i = 0; next[i]; i++)
		if (strncmp(p + 1, next[i], strlen(next[i])) == 0)
			return true;
	return false;
}

void log_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap; p++) {
		if (*p == '\n' && p[strspn((const char *)p, "\n")] == '\0')
			break; /* the message's final newline(s) */
		if (*p == '\n' && log_soft_break((const char *)p)) {
			out[o++] = ' ';
			if (p[1] == '\t')
				p++;
			continue;
		}
		/* C0 controls and DEL, and the C1 controls in UTF-8 (C2 80..C2 9F, e.g. CSI). */
		bool c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
		if (*p >= 0x20 && *p != 0x7f && !c1) {
			out[o++] = (char)*p;
			continue;
		}
		if (c1)
			p++;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
	}
	out[o] = '\0';
}

/* Appends value to buf at *n, quoted when it holds a space, a quote or nothing. */
static void log_put_value(char *buf, size_t cap, int *n, const char *v)
{
	bool quote = !*v || strpbrk(v, " \"=\\") != NULL;
	if (quote && (size_t)*n < cap - 1)
		buf[(*n)++] = '"';
	for (; *v && (size_t)*n < cap - 2; v++) {
		char c = *v; /* controls: escaped with the whole line (log_escape) */
		if (quote && (c == '"' || c == '\\'))
			buf[(*n)++] = '\\';
		buf[(*n)++] = c;
	}
	if (quote && (size_t)*n < cap - 1)
		buf[(*n)++] = '"';
	buf[*n] = '\0';
}

/* The fields whose values are numbers: JSON numbers in a JSON line, whatever their text. */
static bool log_numeric(const char *key)
{
	static const char *const keys[] = {"status", "ms", NULL};
	for (int i = 0; keys[i]; i++)
		if (strcmp(key, keys[i]) == 0)
			return true;
	return false;
}

/* v as a JSON number (integer, or real when it has a fraction), or a string when it is none. */
static json_t *log_number(const char *v)
{
	char *end = NULL;
	if (!strpbrk(v, ".eE")) {
		long long i = strtoll(v, &end, 10);
		if (end != v && *end == '\0')
			return json_integer(i);
	} else {
		double d = strtod(v, &end);
		if (end != v && *end == '\0')
			return json_real(d);
	}
	return json_string(v);
}

void log_fields(enum log_level level, const char *reqid, const char *event,
		const struct log_field *fields, size_t nf)
{
	if (!log_enabled(level))
		return;
	if (log_json) {
		json_t *o = json_object();
		if (reqid)
			json_object_set_new(o, "reqid", json_string(reqid));
		json_object_set_new(o, "event", json_string(event));
		for (size_t i = 0; i < nf; i++) {
			json_t *v = !fields[i].value             ? NULL
				    : log_numeric(fields[i].key) ? log_number(fields[i].value)
								 : json_string(fields[i].value);
			if (v)
				json_object_set_new(o, fields[i].key, v);
		}
		log_json_line(level, o);
		return;
	}
	char line[1024], ts[80];
	log_stamp(ts, sizeof ts);
	int n = snprintf(line, sizeof line, "%s %-5s ", ts, log_names[level]);
	if (reqid)
		n += snprintf(line + n, sizeof line - (size_t)n, "[%s] ", reqid);
	n += snprintf(line + n, sizeof line - (size_t)n, "%s", event);
	for (size_t i = 0; i < nf && n >= 0 && (size_t)n < sizeof line - 4; i++) {
		if (!fields[i].value)
			continue;
		n += snprintf(line + n, sizeof line - (size_t)n, " %s=", fields[i].key);
		if ((size_t)n >= sizeof line - 2)
			break;
		log_put_value(line, sizeof line, &n, fields[i].value);
	}
	char safe[4 * sizeof line];
	log_escape(line, safe, sizeof safe);
	fprintf(stderr, "%s\n", safe);
}

bool log_due(struct log_limit *l, long seconds, unsigned long *skipped)
{
	time_t now = time(NULL);
	long last = atomic_load(&l->last);
	*skipped = 0;
	if (last && now - last < seconds) {
		atomic_fetch_add(&l->skipped, 1);
		return false;
	}
	if (!atomic_compare_exchange_strong(&l->last, &last, (long)now)) {
		atomic_fetch_add(&l->skipped, 1); /* another thread writes this one */
		return false;
	}
	*skipped = atomic_exchange(&l->skipped, 0);
	return true;
}
