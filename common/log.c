/* Leveled, printf-checked logging to stderr (stdout is the stdio transport's wire). */
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level log_threshold = LOG_INFO;
static const char *const log_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level level)
{
	log_threshold = level;
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

void log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
{
	if (level < log_threshold)
		return;
	char line[1024];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ts.tv_nsec / 1000000, log_names[level]);
	if (reqid && n >= 0 && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, "[%s] ", reqid);
	if (n >= 0 && (size_t)n < sizeof line) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* One write per line so that concurrent workers do not interleave. */
	char safe[4 * sizeof line];
	log_escape(line, safe, sizeof safe);
	fprintf(stderr, "%s\n", safe);
}

void log_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap; p++) {
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
