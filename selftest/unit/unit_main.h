/* unit_main.h - the end of every unit test program's main: run the suite, exit as it went.
 *
 * Verbosity comes from CK_VERBOSITY; selftest/sections/10-unit.sh reads Check's summary line.
 */
#ifndef SELFTEST_UNIT_MAIN_H
#define SELFTEST_UNIT_MAIN_H

#include <check.h>
#include <stdlib.h>

/* Runs every test of `suite`, frees it, and returns main's exit status. */
static inline int run_unit_suite(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_ENV);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
