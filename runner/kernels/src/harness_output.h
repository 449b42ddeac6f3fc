/* harness_output.c: one JSON object per line, flushed at once. */
#ifndef HB_HARNESS_OUTPUT_H
#define HB_HARNESS_OUTPUT_H

#include "harness_internal.h"

void hbi_emit(hb_json *j);
/* Starts {"v":1,"type":type */
void hbi_event(hb_json *j, const char *type);
/* "build":{"cc":...,"cflags":...} */
void hbi_build_json(hb_json *j);
/* "op" and "block_bytes" of a configuration, where it has them. */
void hbi_config_fields(hb_json *j, const hb_config *c);

#endif
