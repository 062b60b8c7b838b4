/* What the HTTP transport adds to a message's span: HTTP itself, the client's address (personal
 * data, only when the setting allows), and the parts of the request before its message was read:
 * the token's check (with the issuer's wait) and the wait for a call slot, as child spans. */
#ifndef BIKAROO_HTTP_TRACE_H
#define BIKAROO_HTTP_TRACE_H

struct http_req;

/* Adds them to st's span (st->span NULL: nothing); called once its message is read. */
void http_trace_parts(struct http_req *st);

#endif
