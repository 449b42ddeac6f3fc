/* What the host says about itself in sysfs and procfs, read in one place for every kernel: the
 * cache sizes and free memory (memory kernel), the file system and block device under a path,
 * the O_DIRECT alignment of a file and the interrupt line a device completes on (disk kernel).
 * Threads, timers and the clock are host.h. */
#ifndef HB_HOSTFACTS_H
#define HB_HOSTFACTS_H

#include <stddef.h>
#include <sys/types.h>

/* A sysfs or procfs text file into buf: at most len - 1 bytes, trailing newlines and spaces
 * removed. 0, or -1 when it cannot be opened (buf is then ""). */
int hb_read_text(const char *path, char *buf, size_t len);

/* "48K", "1024K", "32M", "1G", "512" (as sysfs writes cache sizes) -> bytes; -1 when it is not
 * a size. */
long long hb_parse_size(const char *text);

/* ---- caches and memory ---- */

typedef struct hb_caches {
    long long l1d, l2, l3, l3_total, line; /* bytes */
    int l3_instances;                      /* distinct L3s over the CPUs given */
    const char *source;                    /* where the sizes came from, for the facts */
} hb_caches;

/* The caches of cpus[0] from /sys/devices/system/cpu (test builds: $HBK_TEST_SYSFS_CPU when
 * set), and l3_total, the sum of the distinct L3s (by shared_cpu_list) over all ncpus CPUs.
 * Missing levels are filled in: no L3 takes the L2's size (or 32 MiB), no L1d 32 KiB, no line
 * size 64 bytes; source says which. */
void hb_detect_caches(hb_caches *c, const int *cpus, int ncpus);

/* MemAvailable of /proc/meminfo in bytes; -1 when unknown. */
long long hb_mem_available(void);

/* /sys/kernel/mm/transparent_hugepage/enabled, or "unknown". */
void hb_thp_mode(char *buf, size_t len);

/* ---- file systems and block devices ---- */

/* File system type ("unknown" when not found) and mount point (left as it is when not found)
 * of the device dev that path is on: the longest mount point in /proc/self/mountinfo that
 * prefixes path. */
void hb_find_mount(dev_t dev, const char *path, char *fstype, size_t fstype_len, char *mount,
                   size_t mount_len);

typedef struct hb_blockdev {
    char name[64];          /* "" when dev is not a block device (tmpfs, overlay ...) */
    int lbs;                /* logical block size; 0 when neither sysfs nor BLKSSZGET tells */
    const char *lbs_source; /* where lbs came from; NULL with lbs 0 */
    int rotational;         /* 1, 0, or -1 when unknown */
    int hw_queues;          /* blk-mq hardware queues (entries of mq/); 0 when unknown */
} hb_blockdev;

/* The block device of dev from /sys/dev/block (the whole disk's queue for a partition). */
void hb_find_blockdev(dev_t dev, hb_blockdev *d);

/* statx(STATX_DIOALIGN) (Linux 6.1+): the alignment O_DIRECT needs on this very file.
 * 1: found; 0: the kernel does not say; -1: the filesystem does not support O_DIRECT. */
int hb_dio_align(int fd, int *offset_align, int *mem_align);

/* ---- interrupts ---- */

typedef struct hb_irq_line {
    int cpus[8], ncpus; /* the CPUs that counted at least a quarter of its interrupts */
    char name[64];      /* "<number> <name>" as /proc/interrupts labels it */
} hb_irq_line;

/* Which numbered interrupt line of /proc/interrupts counts what provoke(arg) causes: the line
 * that counted the most between a reading before and one after the call, and at least half as
 * many as the n > 0 events provoke returns (<= 0: it failed). 1 with *out filled, else 0. */
int hb_find_irq(int (*provoke)(void *arg), void *arg, hb_irq_line *out);

/* ---- the cgroup's CPU quota: CFS bandwidth throttling ---- */

#define HB_CG_LEVELS 16

/* The cpu.stat files that count this process's throttling: its cgroup's and each ancestor's up to
 * its hierarchy's root (a quota on any of them holds its threads), in the cgroup v1 hierarchy that
 * has the cpu controller (throttled_time, ns) and in the v2 one (throttled_usec), found through
 * /proc/self/cgroup and /proc/self/mountinfo (paths given, for tests). Only levels whose cpu.stat
 * states a throttled time are kept: none (n 0) where no quota can be seen. */
typedef struct hb_cg_throttle {
    char path[HB_CG_LEVELS][600];
    int usec[HB_CG_LEVELS]; /* 1: throttled_usec (v2); 0: throttled_time in ns (v1) */
    int n;
} hb_cg_throttle;

void hb_cg_throttle_find(hb_cg_throttle *t, const char *cgroup_file, const char *mountinfo_file);

/* The throttled time of each level, in ns, into ns[0 .. t->n - 1] (-1 where it cannot be read). */
void hb_cg_throttled_ns(const hb_cg_throttle *t, long long *ns);

#endif
