/* Host facts (src/hostfacts.c): sizes parse as sysfs writes them, and the one text reader
 * trims what the kernel appends and says when a file is missing. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "hostfacts.h"

static void test_parse_size(void)
{
    CHECK(hb_parse_size("48K") == 48 * 1024, "48K");
    CHECK(hb_parse_size("32768K") == 32LL << 20, "32768K");
    CHECK(hb_parse_size("2M") == 2LL << 20, "2M");
    CHECK(hb_parse_size("1G") == 1LL << 30, "1G");
    CHECK(hb_parse_size("512") == 512, "512");
    CHECK(hb_parse_size("") == -1 && hb_parse_size("K") == -1 &&
          hb_parse_size("12Q") == -1 && hb_parse_size("-4K") == -1, "garbage refused");
}

static void test_read_text(void)
{
    char path[] = "/tmp/hbk-test-hostfacts-XXXXXX", buf[16];
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    CHECK(write(fd, "always [madvise] never \n", 24) == 24, "write");
    close(fd);
    CHECK(hb_read_text(path, buf, sizeof buf) == 0, "read");
    CHECK_STR(buf, "always [madvise"); /* at most len - 1 bytes */
    char big[64];
    CHECK(hb_read_text(path, big, sizeof big) == 0, "read");
    CHECK_STR(big, "always [madvise] never"); /* trailing space and newline removed */
    unlink(path);
    buf[0] = 'x';
    CHECK(hb_read_text(path, buf, sizeof buf) == -1 && buf[0] == '\0', "missing file: -1, \"\"");
}

int main(void)
{
    test_parse_size();
    test_read_text();
    return check_summary();
}
