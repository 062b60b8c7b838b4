/* Connections per client address, across every loop of the HTTP transport
 * (BIKAROO_MAX_CONNECTIONS_PER_IP): taken when a loop accepts a connection, given back when it
 * closes. Thread-safe (one mutex, held for a table look-up at accept and at close only). */
#ifndef BIKAROO_PEERS_H
#define BIKAROO_PEERS_H

#include <stdbool.h>
#include <sys/socket.h>

struct peers;

/* max: connections one address may hold at once (0: no limit). */
struct peers *peers_new(long max);
void peers_free(struct peers *p);

/* Counts a connection from sa, unless its address holds max already (then false: close it). */
bool peers_take(struct peers *p, const struct sockaddr *sa, socklen_t len);
/* That connection closed. */
void peers_give(struct peers *p, const struct sockaddr *sa, socklen_t len);

#endif
