/* hbk: the kernel binary. Argument dispatch, and the only place that exits.
 * Protocol: docs/kernel-protocol.md. */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void usage(FILE *f)
{
    fputs("usage: hbk <kernel> [--name value ...]\n"
          "       hbk <kernel> --describe     JSON Schema of the kernel's parameters and rules\n"
          "       hbk <kernel> --check [--name value ...]\n"
          "                                   check parameters and rules; measure nothing\n"
          "       hbk --list                  JSON array of kernel names\n"
          "       hbk --version               JSON object: version, compiler, flags\n"
          "Output is one JSON object per line on stdout (docs/kernel-protocol.md).\n",
          f);
}

static hb_status dispatch(int argc, char **argv, hb_err *err)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stderr);
        return HB_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--list"))
        return hb_list();
    if (argc == 2 && !strcmp(argv[1], "--version"))
        return hb_version();
    if (argc < 2 || argv[1][0] == '-') {
        usage(stderr);
        return hb_errorf(err, HB_BAD_PARAM, "name a kernel first: hbk <kernel> [--name value "
                         "...]; hbk --list names them");
    }
    const hb_kernel *k = hb_kernel_find(argv[1]);
    if (!k) {
        char names[256] = "";
        size_t len = 0;
        for (int i = 0; hb_kernels[i]; i++)
            len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0,
                                    "%s%s", i ? ", " : "", hb_kernels[i]->name);
        return hb_errorf(err, HB_BAD_PARAM, "unknown kernel \"%.40s\"; kernels: %s", argv[1],
                         names);
    }
    for (int a = 2; a < argc; a++) {
        if (!strcmp(argv[a], "--describe")) {
            if (argc != 3)
                return hb_errorf(err, HB_BAD_PARAM, "--describe takes no other parameters: "
                                 "hbk %s --describe", k->name);
            return hb_describe(k, err);
        }
    }
    for (int a = 2; a < argc; a++) {
        if (!strcmp(argv[a], "--check")) { /* a value never starts with "--": this is the flag */
            for (int b = a; b + 1 < argc; b++)
                argv[b] = argv[b + 1];
            return hb_check(k, argc - 3, argv + 2, err);
        }
    }
    hb_status st = hb_guard_parent(err);
    if (st != HB_OK)
        return st;
    return hb_run(k, argc - 2, argv + 2, err);
}

int main(int argc, char **argv)
{
    hb_err err = {HB_OK, ""};
    hb_status st = dispatch(argc, argv, &err);
    /* untrusted runs have already said so in their end event */
    if (st != HB_OK && st != HB_UNTRUSTED)
        hb_emit_error(&err);
    return (int)st;
}
