/* Minimal assert harness for the C tests: CHECK counts, the summary line is parsed by check.py. */
#ifndef HB_TEST_CHECK_H
#define HB_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int t_passed, t_failed;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (cond) {                                                                            \
            t_passed++;                                                                        \
        } else {                                                                               \
            t_failed++;                                                                        \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

#define CHECK_STR(got, want) CHECK(strcmp((got), (want)) == 0, "got %s, want %s", (got), (want))

static int check_summary(void)
{
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed != 0;
}

#endif
