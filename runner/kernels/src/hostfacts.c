/* Host facts from sysfs and procfs (hostfacts.h): one text reader, the caches and free memory
 * for the memory kernel, the file system, block device, O_DIRECT alignment and completion
 * interrupt line for the disk kernel. Nothing here measures; it reads what the host reports. */
#include "hostfacts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/fs.h>

#define KiB 1024LL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

int hb_read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        buf[0] = '\0';
        return -1;
    }
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

long long hb_parse_size(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || v < 0)
        return -1;
    long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = KiB;
    else if (*end == 'M')
        mult = MiB;
    else if (*end == 'G')
        mult = GiB;
    if (mult != 1)
        end++;
    if (*end || v > LLONG_MAX / mult)
        return -1;
    return v * mult;
}

/* ---- caches and memory ---- */

static const char *sysfs_root(void)
{
#ifdef HBK_TEST_HOOKS
    const char *root = getenv("HBK_TEST_SYSFS_CPU"); /* a fixture tree in tests */
    if (root)
        return root;
#endif
    return "/sys/devices/system/cpu";
}

static int cache_field(int cpu, int index, const char *field, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/%s", sysfs_root(), cpu, index, field);
    return hb_read_text(path, buf, len);
}

void hb_detect_caches(hb_caches *c, const int *cpus, int ncpus)
{
    char buf[256], seen[16][256];
    int nseen = 0;
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 16; i++) {
        char level[16], type[32];
        if (cache_field(cpus[0], i, "level", level, sizeof level) ||
            cache_field(cpus[0], i, "type", type, sizeof type) ||
            cache_field(cpus[0], i, "size", buf, sizeof buf))
            continue;
        long long size = hb_parse_size(buf);
        if (size <= 0)
            continue;
        if (!strcmp(level, "1") && !strcmp(type, "Data"))
            c->l1d = size;
        else if (!strcmp(level, "2") && strcmp(type, "Instruction"))
            c->l2 = size;
        else if (!strcmp(level, "3") && strcmp(type, "Instruction"))
            c->l3 = size;
        if (!c->line && !cache_field(cpus[0], i, "coherency_line_size", buf, sizeof buf))
            c->line = hb_parse_size(buf);
    }
    /* L3 over the CPUs we may run on: one per distinct shared_cpu_list */
    for (int k = 0; k < ncpus && c->l3; k++) {
        for (int i = 0; i < 16; i++) {
            char level[16];
            if (cache_field(cpus[k], i, "level", level, sizeof level) || strcmp(level, "3") ||
                cache_field(cpus[k], i, "shared_cpu_list", buf, sizeof buf))
                continue;
            int dup = 0;
            for (int s = 0; s < nseen && !dup; s++)
                dup = !strcmp(seen[s], buf);
            if (!dup && nseen < 16) {
                snprintf(seen[nseen++], sizeof seen[0], "%s", buf);
                char sz[64];
                long long size = cache_field(cpus[k], i, "size", sz, sizeof sz)
                                     ? c->l3 : hb_parse_size(sz);
                c->l3_total += size > 0 ? size : c->l3;
            }
            break;
        }
    }
    c->l3_instances = nseen;
    c->source = "sysfs";
    if (!c->l3) { /* no L3 reported: the largest cache stands in for it */
        c->l3 = c->l2 ? c->l2 : 32 * MiB;
        c->source = c->l2 ? "sysfs (no L3: the L2 stands in for it)"
                          : "assumed (no cache sizes in sysfs): L3 32 MiB";
    }
    if (!c->l3_total) {
        c->l3_total = c->l3;
        c->l3_instances = 1;
    }
    if (!c->l1d)
        c->l1d = 32 * KiB;
    if (!c->l2)
        c->l2 = c->l1d;
    if (c->line <= 0)
        c->line = 64;
}

long long hb_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * KiB;
}

void hb_thp_mode(char *buf, size_t len)
{
    if (hb_read_text("/sys/kernel/mm/transparent_hugepage/enabled", buf, len))
        snprintf(buf, len, "unknown");
}

/* ---- file systems and block devices ---- */

void hb_find_mount(dev_t dev, const char *path, char *fstype, size_t fstype_len, char *mount,
                   size_t mount_len)
{
    char line[4096], want[32];
    size_t best = 0;
    snprintf(want, sizeof want, "%u:%u", major(dev), minor(dev));
    snprintf(fstype, fstype_len, "unknown");
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char devs[32], mnt[1024], type[64];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %31s %*s %1023s", devs, mnt) != 2 ||
            sscanf(dash + 3, "%63s", type) != 1 || strcmp(devs, want) != 0)
            continue;
        size_t n = strlen(mnt);
        if ((n == 1 || (strncmp(path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0'))) &&
            n >= best) {
            best = n;
            snprintf(fstype, fstype_len, "%s", type);
            snprintf(mount, mount_len, "%s", mnt);
        }
    }
    fclose(f);
}

void hb_find_blockdev(dev_t dev, hb_blockdev *d)
{
    char link[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 64], v[64];
    memset(d, 0, sizeof *d);
    d->rotational = -1;
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    if (major(dev) == 0 || !realpath(link, real))
        return;
    const char *name = strrchr(real, '/');
    snprintf(d->name, sizeof d->name, "%.63s", name ? name + 1 : real);
    snprintf(q, sizeof q, "%s/partition", real);
    int part = access(q, F_OK) == 0;
    snprintf(q, sizeof q, "%s%s/queue/logical_block_size", real, part ? "/.." : "");
    hb_read_text(q, v, sizeof v);
    if (atoi(v) >= 512) {
        d->lbs = atoi(v);
        d->lbs_source = "sysfs queue/logical_block_size";
    } else {
        snprintf(q, sizeof q, "/dev/%s", d->name);
        int fd = open(q, O_RDONLY | O_CLOEXEC);
        int ss = 0;
        if (fd >= 0 && ioctl(fd, BLKSSZGET, &ss) == 0 && ss >= 512) {
            d->lbs = ss;
            d->lbs_source = "ioctl BLKSSZGET";
        }
        if (fd >= 0)
            close(fd);
    }
    snprintf(q, sizeof q, "%s%s/queue/rotational", real, part ? "/.." : "");
    hb_read_text(q, v, sizeof v);
    if (v[0])
        d->rotational = atoi(v);
    snprintf(q, sizeof q, "%s%s/mq", real, part ? "/.." : "");
    DIR *dir = opendir(q);
    if (dir) {
        struct dirent *e;
        while ((e = readdir(dir)))
            d->hw_queues += e->d_name[0] >= '0' && e->d_name[0] <= '9';
        closedir(dir);
    }
}

int hb_dio_align(int fd, int *offset_align, int *mem_align)
{
#ifdef SYS_statx
    unsigned char b[256];
    memset(b, 0, sizeof b);
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, 0x2000U /* STATX_DIOALIGN */, b) != 0)
        return 0;
    uint32_t mask, mem, offs;
    memcpy(&mask, b, 4);
    memcpy(&mem, b + 0x98, 4); /* stx_dio_mem_align */
    memcpy(&offs, b + 0x9c, 4); /* stx_dio_offset_align */
    if (!(mask & 0x2000U))
        return 0;
    if (offs == 0)
        return -1;
    *offset_align = (int)offs;
    *mem_align = (int)mem;
    return 1;
#else
    (void)fd, (void)offset_align, (void)mem_align;
    return 0;
#endif
}

/* ---- interrupts ---- */

typedef struct irq_table {
    int ncols, nlines;
    int col_cpu[1024];
    char label[512][16], name[512][48];
    uint64_t *count; /* [line][col] */
} irq_table;

static int irq_read(irq_table *t)
{
    FILE *f = fopen("/proc/interrupts", "r");
    char *line = NULL;
    size_t cap = 0;
    t->ncols = t->nlines = 0;
    if (!f)
        return 0;
    if (getline(&line, &cap, f) > 0) {
        for (char *tok = strtok(line, " \t\n"); tok && t->ncols < 1024; tok = strtok(NULL, " \t\n"))
            if (!strncmp(tok, "CPU", 3))
                t->col_cpu[t->ncols++] = atoi(tok + 3);
    }
    while (t->ncols && t->nlines < 512 && getline(&line, &cap, f) > 0) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *lab = line;
        while (*lab == ' ')
            lab++;
        snprintf(t->label[t->nlines], sizeof t->label[0], "%.15s", lab);
        char *p = colon + 1, *end;
        uint64_t *row = t->count + (size_t)t->nlines * (size_t)t->ncols;
        int c;
        for (c = 0; c < t->ncols; c++) {
            row[c] = strtoull(p, &end, 10);
            if (end == p)
                break;
            p = end;
        }
        for (; c < t->ncols; c++)
            row[c] = 0;
        char *last = NULL;
        for (char *tok = strtok(p, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
            last = tok;
        snprintf(t->name[t->nlines], sizeof t->name[0], "%.47s", last ? last : "");
        t->nlines++;
    }
    free(line);
    fclose(f);
    return t->nlines;
}

int hb_find_irq(int (*provoke)(void *arg), void *arg, hb_irq_line *out)
{
    irq_table *a = calloc(2, sizeof *a);
    int found = 0;
    if (!a)
        return 0;
    a[0].count = calloc(512 * 1024, sizeof(uint64_t));
    a[1].count = calloc(512 * 1024, sizeof(uint64_t));
    if (!a[0].count || !a[1].count || !irq_read(&a[0]))
        goto out;
    int n = provoke(arg);
    if (n <= 0)
        goto out;
    if (!irq_read(&a[1]) || a[1].ncols != a[0].ncols)
        goto out;
    int best = -1;
    uint64_t best_delta = 0;
    for (int l = 0; l < a[1].nlines && l < a[0].nlines; l++) {
        if (strcmp(a[0].label[l], a[1].label[l]) || a[1].label[l][0] < '0' ||
            a[1].label[l][0] > '9') /* only numbered IRQs: not the timer, IPIs ... */
            continue;
        uint64_t d = 0;
        for (int c = 0; c < a[1].ncols; c++)
            d += a[1].count[(size_t)l * a[1].ncols + c] - a[0].count[(size_t)l * a[0].ncols + c];
        if (d > best_delta) {
            best_delta = d;
            best = l;
        }
    }
    if (best < 0 || best_delta < (uint64_t)n / 2)
        goto out;
    out->ncpus = 0;
    for (int c = 0; c < a[1].ncols && out->ncpus < 8; c++) {
        uint64_t d = a[1].count[(size_t)best * a[1].ncols + c] -
                     a[0].count[(size_t)best * a[0].ncols + c];
        if (d * 4 >= best_delta)
            out->cpus[out->ncpus++] = a[1].col_cpu[c];
    }
    snprintf(out->name, sizeof out->name, "%s %s", a[1].label[best], a[1].name[best]);
    found = 1;
out:
    free(a[0].count);
    free(a[1].count);
    free(a);
    return found;
}

/* ---- the cgroup's CPU quota ---- */

/* The value of `key` in a cpu.stat file; -1 when the file or the key is not there. */
static long long cpu_stat_value(const char *path, const char *key)
{
    char line[256], k[64];
    long long v, out = -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %lld", k, &v) == 2 && strcmp(k, key) == 0) {
            out = v;
            break;
        }
    fclose(f);
    return out;
}

/* Whether the comma-separated list `list` holds `word`. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list;;) {
        if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
        p = strchr(p, ',');
        if (!p)
            return 0;
        p++;
    }
}

/* The mount point and root of the v1 hierarchy with the cpu controller (v2: the cgroup2 mount). */
static int cg_mount(const char *mountinfo_file, int v2, char *mnt, size_t mnt_len, char *root,
                    size_t root_len)
{
    char line[4096], r[1024], m[1024], type[64], opts[1024];
    int found = 0;
    FILE *f = fopen(mountinfo_file, "r");
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", type, opts) != 2)
            continue;
        if (v2 ? strcmp(type, "cgroup2") == 0 : strcmp(type, "cgroup") == 0 && has_word(opts, "cpu")) {
            snprintf(mnt, mnt_len, "%s", m);
            snprintf(root, root_len, "%s", r);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The levels of one hierarchy: the cgroup's directory, then each parent up to the mount point. */
static void cg_levels(hb_cg_throttle *t, const char *mnt, const char *root, const char *cg, int v2)
{
    size_t rl = strlen(root);
    if (strcmp(root, "/") != 0 && strncmp(cg, root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
        cg += rl; /* the mount shows a subtree (a container's): the path is below its root */
    char dir[512];
    if (snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(cg, "/") == 0 ? "" : cg) >= (int)sizeof dir)
        return;
    size_t base = strlen(mnt);
    for (;;) {
        char stat[600];
        snprintf(stat, sizeof stat, "%s/cpu.stat", dir);
        if (t->n < HB_CG_LEVELS && cpu_stat_value(stat, v2 ? "throttled_usec" : "throttled_time") >= 0) {
            snprintf(t->path[t->n], sizeof t->path[0], "%s", stat);
            t->usec[t->n++] = v2;
        }
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= base || !slash || (size_t)(slash - dir) < base)
            break;
        *slash = '\0';
    }
}

void hb_cg_throttle_find(hb_cg_throttle *t, const char *cgroup_file, const char *mountinfo_file)
{
    char line[1024];
    memset(t, 0, sizeof *t);
    FILE *f = fopen(cgroup_file, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        int v2 = controllers[0] == '\0';
        if (!v2 && !has_word(controllers, "cpu"))
            continue;
        char mnt[1024], root[1024];
        if (cg[0] == '/' && cg_mount(mountinfo_file, v2, mnt, sizeof mnt, root, sizeof root))
            cg_levels(t, mnt, root, cg, v2);
    }
    fclose(f);
}

void hb_cg_throttled_ns(const hb_cg_throttle *t, long long *ns)
{
    for (int i = 0; i < t->n; i++) {
        long long v = cpu_stat_value(t->path[i], t->usec[i] ? "throttled_usec" : "throttled_time");
        ns[i] = v < 0 ? -1 : t->usec[i] ? v * 1000 : v;
    }
}
