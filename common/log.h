/* Leveled logging to stderr, one line per event, prefixed with the request id when there is one;
 * readable text by default, JSON lines with log_set_json(). Access lines (log_fields) are
 * key=value pairs. Never log tokens, passwords, tool arguments or whole bodies. */
#ifndef BIKAROO_LOG_H
#define BIKAROO_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level level);
/* Whether a line at level would be written. */
bool log_enabled(enum log_level level);
/* Parses "debug"/"info"/"warn"/"error"; returns 0 on success. */
int log_parse_level(const char *s, enum log_level *out) __attribute__((warn_unused_result));
/* JSON lines ({"ts","level","reqid","msg"} or an access line's fields) instead of text. Any
 * thread, any time (a reload): a line is written whole in one format or the other. */
void log_set_json(bool json);
/* The level and format in effect (any thread may set them again: a reload). */
enum log_level log_get_level(void);
bool log_get_json(void);
/* reqid may be NULL. */
void log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Copies in to out (cap bytes, always terminated, cut short when full) with every control
 * byte written as \xHH: nothing a client sent can move a terminal's cursor, colour it or
 * forge a line. The breaks of libpq's message layout (a newline before a tab, DETAIL:, HINT:,
 * CONTEXT: or LINE) read as a space, and the final newlines go. log_msg and log_fields apply it to
 * every text line (JSON lines are escaped by the JSON encoder). */
void log_escape(const char *in, char *out, size_t cap);

/* A line repeated at most once per period: a static struct log_limit per call site (zeroed). */
struct log_limit {
	_Atomic long last;             /* time() of the last line written, 0: none yet */
	_Atomic unsigned long skipped; /* lines left out since */
};
/* Whether the line of this site may be written now: true the first time and once seconds have
 * passed since the last one written, with *skipped set to how many were left out meanwhile (0 when
 * false). */
bool log_due(struct log_limit *l, long seconds, unsigned long *skipped)
	__attribute__((warn_unused_result));

/* One named field of a structured line; value borrowed (NULL: left out). */
struct log_field {
	const char *key;
	const char *value;
};
/* One structured line: event then key=value pairs (text; values with spaces or quotes quoted),
 * or one JSON object with "event" and the fields (JSON), where the fields that hold numbers
 * (status, ms) are JSON numbers. */
void log_fields(enum log_level level, const char *reqid, const char *event,
		const struct log_field *fields, size_t n);

#define log_debug(...) log_msg(LOG_DEBUG, NULL, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, NULL, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, NULL, __VA_ARGS__)

#endif
