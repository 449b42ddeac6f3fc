/* Host facts (src/hostfacts.c): sizes parse as sysfs writes them, the one text reader
 * trims what the kernel appends and says when a file is missing, and the cgroup files that count
 * a CPU quota's throttling are found as a container sees them. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A container's view: its v1 cpu hierarchy mounted from the subtree /docker (mountinfo's root),
 * its cgroup /docker/abc in /proc/self/cgroup; and a v2 cgroup /x whose root states no throttling. */
static void test_cgroup_throttle_levels(void)
{
    char root[] = "/tmp/hbk-test-cgroup-XXXXXX", p[512], cg[600], mi[600];
    if (!mkdtemp(root)) {
        CHECK(0, "mkdtemp");
        return;
    }
    const char *dirs[] = {"cpu", "cpu/abc", "unified", "unified/x"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
        mkdir(p, 0700);
    }
    snprintf(p, sizeof p, "%s/cpu/abc/cpu.stat", root);
    put(p, "nr_periods 10\nnr_throttled 4\nthrottled_time 5000\n");
    snprintf(p, sizeof p, "%s/cpu/cpu.stat", root);
    put(p, "nr_periods 0\nnr_throttled 0\nthrottled_time 7\n");
    snprintf(p, sizeof p, "%s/unified/x/cpu.stat", root);
    put(p, "usage_usec 100\nthrottled_usec 3\n");
    snprintf(p, sizeof p, "%s/unified/cpu.stat", root);
    put(p, "usage_usec 100\n"); /* the v2 root: no quota, no throttled time: not a level */
    snprintf(cg, sizeof cg, "%s/cgroup", root);
    put(cg, "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/x\n");
    snprintf(mi, sizeof mi, "%s/mountinfo", root);
    char text[2048];
    snprintf(text, sizeof text,
             "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
             "35 31 0:32 /docker %s/memory rw - cgroup cgroup rw,memory\n"
             "32 31 0:29 /docker %s/cpu rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
             "41 31 0:38 / %s/unified rw - cgroup2 cgroup2 rw\n", root, root, root);
    put(mi, text);

    hb_cg_throttle t;
    long long ns[HB_CG_LEVELS];
    hb_cg_throttle_find(&t, cg, mi);
    CHECK(t.n == 3, "levels: the cgroup and its hierarchy's root (v1), the v2 cgroup; got %d", t.n);
    hb_cg_throttled_ns(&t, ns);
    CHECK(t.n == 3 && ns[0] == 5000 && ns[1] == 7 && ns[2] == 3000, "throttled ns %lld %lld %lld",
          ns[0], ns[1], ns[2]);
    snprintf(p, sizeof p, "%s/cpu/abc/cpu.stat", root);
    unlink(p);
    hb_cg_throttled_ns(&t, ns);
    CHECK(ns[0] == -1 && ns[1] == 7, "a level gone reads -1, never 0");
    hb_cg_throttle_find(&t, "/nonexistent/cgroup", mi);
    CHECK(t.n == 0, "no /proc/self/cgroup: no level (the result line leaves throttled_share out)");

    const char *files[] = {"cpu/cpu.stat", "unified/x/cpu.stat", "unified/cpu.stat", "cgroup", "mountinfo"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        unlink(p);
    }
    for (int i = 3; i >= 0; i--) {
        snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
        rmdir(p);
    }
    rmdir(root);
}

int main(void)
{
    test_parse_size();
    test_read_text();
    test_cgroup_throttle_levels();
    return check_summary();
}
