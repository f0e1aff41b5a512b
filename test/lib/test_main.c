/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_main.c - runs every libreqsched Check suite. */
#include <stdlib.h>

#include "harness.h"

int main(void)
{
	SRunner *sr = srunner_create(suite_msf());
	int failed;

	srunner_add_suite(sr, suite_window());
	srunner_add_suite(sr, suite_misuse());
	srunner_add_suite(sr, suite_drr());
	srunner_add_suite(sr, suite_rtc());
	srunner_add_suite(sr, suite_reconfig());
	srunner_add_suite(sr, suite_pacer());
	srunner_add_suite(sr, suite_link());
	srunner_add_suite(sr, suite_admission());
	srunner_add_suite(sr, suite_slotage());
	srunner_add_suite(sr, suite_mqos());
	srunner_add_suite(sr, suite_share());
	srunner_add_suite(sr, suite_gate());
	srunner_add_suite(sr, suite_costlearn());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
