/* Strict Base64 (RFC 4648 §4) and base64url (§5) without line breaks. */
#ifndef BIKAROO_B64_H
#define BIKAROO_B64_H

#include <stdbool.h>
#include <stddef.h>

/* Decodes src (standard alphabet, padding required when url is false; url alphabet, padding
 * optional when url is true). Returns new memory (caller frees), NUL-terminated, length in
 * *out_len; NULL when src is not valid. */
unsigned char *b64_decode(const char *src, size_t len, bool url, size_t *out_len);
/* Encodes into new memory (caller frees), NUL-terminated. url: base64url without padding. */
char *b64_encode(const unsigned char *src, size_t len, bool url);

#endif
