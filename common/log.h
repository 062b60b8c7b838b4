/* Leveled logging to stderr, one line per event, prefixed with the request id when there is one.
 * Never log tokens, passwords or whole bodies. */
#ifndef BIKAROO_LOG_H
#define BIKAROO_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level level);
/* Parses "debug"/"info"/"warn"/"error"; returns 0 on success. */
int log_parse_level(const char *s, enum log_level *out) __attribute__((warn_unused_result));
/* reqid may be NULL. */
void log_msg(enum log_level level, const char *reqid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Copies in to out (cap bytes, always terminated, cut short when full) with every control
 * byte written as \xHH: nothing a client sent can move a terminal's cursor, colour it or
 * forge a line. log_msg applies it to every line. */
void log_escape(const char *in, char *out, size_t cap);

#define log_debug(...) log_msg(LOG_DEBUG, NULL, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, NULL, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, NULL, __VA_ARGS__)

#endif
