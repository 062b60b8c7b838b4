/* What the HTTP transport adds to a message's span (http_trace.h). */
#include "http_trace.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "common/trace.h"
#include "http_server.h"

/* A part of st's span that came before its message was read: a child from ns[0] to ns[1]. */
static void http_trace_part(struct http_req *st, const char *name, const long long ns[2])
{
	if (!ns[1])
		return;
	struct trace_span *s = trace_child(st->span, name, TRACE_INTERNAL, ns[0]);
	trace_end(s, ns[1]);
}

/* What the transport adds to its message's span: HTTP, the client's address (personal data),
 * and the parts before the message was read: the token's check, the wait for a call slot. */
void http_trace_parts(struct http_req *st)
{
	if (!st->span) { /* the message is not sampled: nor is its authorization */
		trace_discard(st->auth_span);
		st->auth_span = NULL;
		return;
	}
	trace_str(st->span, "network.protocol.name", "http");
	trace_str(st->span, "network.protocol.version", st->proto);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(st->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char host[64], port[8];
	if (trace_personal_data() && ci && ci->client_addr &&
	    getnameinfo(ci->client_addr,
			ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							       : sizeof(struct sockaddr_in),
			host, sizeof host, port, sizeof port,
			NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
		trace_str(st->span, "client.address", host);
		trace_int(st->span, "client.port", strtol(port, NULL, 10));
	}
	if (st->auth_span) {
		/* It waited for the issuer: its span, begun then, with the fetches inside. */
		trace_move(st->auth_span, st->span);
		trace_end(st->auth_span, st->auth_ns[1]);
		st->auth_span = NULL;
	} else {
		http_trace_part(st, "authorize", st->auth_ns);
	}
	http_trace_part(st, "call slot", st->wait_ns);
}
