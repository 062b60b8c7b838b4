/* Base64 encoding and strict decoding (bad characters or padding are refused). */
#include "b64.h"

#include <stdlib.h>

#include "mem.h"

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64_value(char c, bool url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (url ? '-' : '+'))
		return 62;
	if (c == (url ? '_' : '/'))
		return 63;
	return -1;
}

unsigned char *b64_decode(const char *src, size_t len, bool url, size_t *out_len)
{
	size_t pad = 0;
	while (pad < 2 && len > pad && src[len - 1 - pad] == '=')
		pad++;
	if (!url && (len % 4 != 0))
		return NULL;
	size_t data = len - pad;
	if (url && pad && (len % 4 != 0))
		return NULL;
	if (data % 4 == 1)
		return NULL;
	unsigned char *out = mem_alloc(data / 4 * 3 + 3 + 1);
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	for (size_t i = 0; i < data; i++) {
		int v = b64_value(src[i], url);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* Leftover bits must be zero (canonical encoding). */
	if (acc != 0) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

char *b64_encode(const unsigned char *src, size_t len, bool url)
{
	const char *abc = url ? b64_url : b64_std;
	char *out = mem_alloc((len + 2) / 3 * 4 + 1);
	size_t o = 0, i = 0;
	for (; i + 2 < len; i += 3) {
		unsigned v = (unsigned)src[i] << 16 | (unsigned)src[i + 1] << 8 | src[i + 2];
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = abc[v >> 6 & 63];
		out[o++] = abc[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned)src[i] << 16 | (i + 1 < len ? (unsigned)src[i + 1] << 8 : 0);
		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		if (i + 1 < len)
			out[o++] = abc[v >> 6 & 63];
		else if (!url)
			out[o++] = '=';
		if (!url)
			out[o++] = '=';
	}
	out[o] = '\0';
	return out;
}
