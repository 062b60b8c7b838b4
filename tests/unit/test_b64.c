/* Base64: round trips, and strictness on bad characters and padding. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "tests/check_main.h"

START_TEST(round_trip)
{
	const char *samples[] = {"",     "f",     "fo",     "foo",
				 "foob", "fooba", "foobar", "get_bike_status"};
	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		for (int url = 0; url < 2; url++) {
			char *enc = b64_encode((const unsigned char *)samples[i],
					       strlen(samples[i]), url);
			size_t n = 0;
			unsigned char *dec = b64_decode(enc, strlen(enc), url, &n);
			ck_assert_ptr_nonnull(dec);
			ck_assert_uint_eq(n, strlen(samples[i]));
			ck_assert_mem_eq(dec, samples[i], n);
			free(enc);
			free(dec);
		}
	}
}
END_TEST

START_TEST(known_vectors)
{
	char *e = b64_encode((const unsigned char *)"foobar", 6, false);
	ck_assert_str_eq(e, "Zm9vYmFy");
	free(e);
	e = b64_encode((const unsigned char *)"fo", 2, false);
	ck_assert_str_eq(e, "Zm8=");
	free(e);
	e = b64_encode((const unsigned char *)"\xfb\xff", 2, true);
	ck_assert_str_eq(e, "-_8");
	free(e);
}
END_TEST

START_TEST(rejects_invalid)
{
	size_t n;
	const char *bad[] = {"!!!!", "Zm9", "Zm9vY", "Zm=v", "Zm8==", "Zm9=", "Z===", "Zm9v\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(b64_decode(bad[i], strlen(bad[i]), false, &n) == NULL, "accepted %s",
			      bad[i]);
	ck_assert_ptr_null(b64_decode("-_8=", 4, false, &n)); /* url alphabet in standard mode */
}
END_TEST

CHECK_SUITE(b64)
{
	Suite *s = suite_create("b64");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, known_vectors);
	tcase_add_test(tc, rejects_invalid);
	suite_add_tcase(s, tc);
	return s;
}
