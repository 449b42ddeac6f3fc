"""`hbk <kernel> --describe` of every kernel the experiments run, less "build": written by
python -m hostbench_common.snapshot, kept equal to the built kernel's by
backend/tests/test_kernel_rules.py.
"""
import json
from typing import Any

DESCRIBE: dict[str, Any] = json.loads(r'''{
 "cpu": {
  "v": 1,
  "kernel": "cpu",
  "title": "CPU arithmetic throughput",
  "description": "Peak FP64/FP32 FLOP/s (fused multiply-add chains) or int32 vector add ops/s per thread count, on the widest vector ISA of the CPU; every chunk of work is checked against its closed form.",
  "unit": "GFLOP/s",
  "parameters": {
   "type": "object",
   "additionalProperties": false,
   "properties": {
    "op": {"type": "string", "enum": ["fp64", "fp32", "int32"], "default": "fp64", "description": "fp64 / fp32: fused multiply-add chains (x <- x*m + c; mul+add without FMA), in GFLOP/s; int32: vector integer add chains, in GIOP/s."},
    "isa": {"type": "string", "enum": ["auto", "avx512", "avx2", "sse2", "scalar"], "default": "auto", "description": "Instruction set. auto takes the widest this CPU supports; naming one it lacks ends with error code unsupported."},
    "threads": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 256}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1, 2, 4, 8], "description": "Thread counts, run one after another. Threads are pinned round-robin over the CPUs of the process affinity mask; more threads than CPUs is allowed and reported as oversubscribed."},
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3, "description": "Measured phases per thread count; each one gives a result line."},
    "duration_s": {"type": "number", "minimum": 0.2, "maximum": 86400, "default": 5, "description": "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    "warmup_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Warm-up phase before the measured phases of each thread count, seconds; its samples say warmup:true and it gives no result. 0 skips it."},
    "interval_s": {"type": "number", "minimum": 0.1, "maximum": 60, "default": 1, "description": "Sampling interval, seconds: one sample line per interval of every phase."},
    "stable_cv": {"type": "number", "minimum": 0, "maximum": 0.5, "default": 0, "description": "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. 0 = exactly `repeats` phases."},
    "max_repeats": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10, "description": "Upper bound on measured phases per thread count when stable_cv > 0."},
    "no_sampler": {"type": "boolean", "default": false, "description": "Run without the sampler (no sample lines), to show what sampling costs."},
    "sampler_ab": {"type": "boolean", "default": false, "description": "To measure what sampling costs within one process, on the same memory and threads: the measured phases come in pairs, one with the sampler and one without, the order swapped every other pair (with/without, without/with, ...); each result says `sampler`. Needs an even `repeats` and stable_cv 0."}
   },
   "x-rules": [
    {"param": "max_repeats", "when": {"stable_cv": {"exclusiveMinimum": 0}}, "minimumParam": "repeats", "reason": "repeat-until-stable runs at least `repeats` phases"},
    {"param": "repeats", "when": {"sampler_ab": {"enum": [true]}}, "multipleOf": 2, "reason": "sampler_ab compares phases with and without the sampler in pairs: it needs an even `repeats`"},
    {"param": "no_sampler", "when": {"sampler_ab": {"enum": [true]}}, "enum": [false], "reason": "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"param": "stable_cv", "when": {"sampler_ab": {"enum": [true]}}, "maximum": 0, "reason": "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"}
   ]
  }
 },
 "disk": {
  "v": 1,
  "kernel": "disk",
  "title": "Disk throughput, IOPS and latency",
  "description": "Sequential and random reads and writes and a 50/50 mix on a test file of the runner's work directory, buffered or direct, at a queue depth per thread (pread/pwrite, io_uring or Linux AIO): MB/s, IOPS and latency avg/p50/p99/p99.9; every read is checked against the file's known content.",
  "unit": "MB/s",
  "parameters": {
   "type": "object",
   "additionalProperties": false,
   "properties": {
    "op": {"type": "array", "items": {"type": "string", "enum": ["rw", "seq_read", "seq_write", "rand_read", "rand_write"]}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": ["rw", "seq_read", "seq_write", "rand_read", "rand_write"], "description": "Operations, each run at every block size: rw (a sequential stream, each I/O a read or a write at random, 50/50, like fio rw=rw), seq_read, seq_write (each thread streams through its own slice of the file), rand_read, rand_write (uniform block-aligned offsets over the whole file)."},
    "blocks": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 83886080}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [8, 8192, 8388608, 83886080], "description": "Block sizes in bytes, 1 B to 80 MiB (e.g. 1,1024,4096,1048576). With direct I/O every block must be a multiple of the device's logical block size (512 or 4096)."},
    "direct": {"type": "boolean", "default": false, "description": "true: O_DIRECT, the page cache is bypassed and the device is measured (aligned buffers, blocks a multiple of the logical block size). false: buffered I/O through the page cache; every phase starts with the file flushed and dropped from the cache, but reads may still be served by readahead and writes by the cache (see fsync_writes)."},
    "iodepth": {"type": "integer", "minimum": 1, "maximum": 256, "default": 1, "description": "I/Os in flight per thread. 1: one at a time. More needs an asynchronous engine (io_uring, or Linux AIO which is only asynchronous with direct I/O)."},
    "submit_batch": {"type": "integer", "minimum": 1, "maximum": 256, "default": 1, "description": "Most completions reaped, and I/Os handed to the kernel, per group (io_uring, libaio). 1: each completion is taken and its slot resubmitted at once, like fio's default (iodepth_batch_submit = iodepth_batch_complete_max = 1), so the queue stays at iodepth and the average latency is iodepth / IOPS. Larger batches save system calls, but the block layer then holds the batch back (plugging) and the first I/O waits for the last."},
    "engine": {"type": "string", "enum": ["auto", "io_uring", "libaio", "psync"], "default": "auto", "description": "How I/O is issued. auto: pread/pwrite at iodepth 1; io_uring when this kernel allows it, else libaio (Linux native AIO) for deeper queues. The start event says which ran and why."},
    "file_size": {"type": "integer", "minimum": 1048576, "maximum": 68719476736, "default": 1073741824, "description": "Size of the test file in bytes (a multiple of 4096), 1 MiB to 64 GiB. It must fit in the free space of the work directory's filesystem minus a reserve of max(1 GiB, 5 %). Make it larger than RAM to defeat the page cache with buffered I/O."},
    "cold_cache": {"type": "boolean", "default": true, "description": "Buffered I/O only. true: each thread drops the file's pages from the page cache every time it has moved its share of the file (its slice, or file_size / threads for random ops), so every pass goes to the device through readahead and the cache (fio does the same at each loop over its file). false: only before each phase; later passes over a file smaller than RAM then measure the page cache."},
    "fsync_writes": {"type": "boolean", "default": false, "description": "true: every thread of a phase that writes ends with fdatasync(), inside the timed window, so buffered writes are counted only once they are on the device."},
    "hugepages": {"type": "boolean", "default": true, "description": "true: a thread's I/O buffers, once they add up to 2 MiB or more, are 2 MiB-aligned and advised onto transparent huge pages, so a large direct I/O is a few physically contiguous memory segments. false: 4 KiB pages (MADV_NOHUGEPAGE), as a program's malloc'd buffers usually are (fio's default): a 1 MiB direct I/O is then 256 segments, and a device that takes fewer per request (queue/max_segments) gets it split. The result's huge_page_buffers says whether the buffers were advised onto huge pages (the kernel accepted the advice)."},
    "placement": {"type": "string", "enum": ["auto", "spread", "unpinned"], "default": "auto", "description": "Where the threads run. auto: when the device has one queue, the first thread on the CPU that takes its completion interrupts (found by watching /proc/interrupts during a short burst of reads), the others round-robin from there; else spread. spread: pinned round-robin from the first CPU of the affinity mask. unpinned: anywhere in the mask (the scheduler follows the interrupts; what fio does by default)."},
    "workdir": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".", "description": "Directory for the test file, set by the runner (its own work directory), never by a job. It must exist and belong to this process's user."},
    "threads": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 256}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1, 2, 4, 8], "description": "Thread counts, run one after another. Threads are pinned round-robin over the CPUs of the process affinity mask; more threads than CPUs is allowed and reported as oversubscribed."},
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3, "description": "Measured phases per thread count; each one gives a result line."},
    "duration_s": {"type": "number", "minimum": 0.2, "maximum": 86400, "default": 5, "description": "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    "warmup_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Warm-up phase before the measured phases of each thread count, seconds; its samples say warmup:true and it gives no result. 0 skips it."},
    "interval_s": {"type": "number", "minimum": 0.1, "maximum": 60, "default": 1, "description": "Sampling interval, seconds: one sample line per interval of every phase."},
    "stable_cv": {"type": "number", "minimum": 0, "maximum": 0.5, "default": 0, "description": "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. 0 = exactly `repeats` phases."},
    "max_repeats": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10, "description": "Upper bound on measured phases per thread count when stable_cv > 0."},
    "no_sampler": {"type": "boolean", "default": false, "description": "Run without the sampler (no sample lines), to show what sampling costs."},
    "sampler_ab": {"type": "boolean", "default": false, "description": "To measure what sampling costs within one process, on the same memory and threads: the measured phases come in pairs, one with the sampler and one without, the order swapped every other pair (with/without, without/with, ...); each result says `sampler`. Needs an even `repeats` and stable_cv 0."}
   },
   "x-rules": [
    {"param": "file_size", "when": {}, "multipleOf": 4096, "reason": "the file is written and read in whole 4 KiB pages; give e.g. 1073741824 (1 GiB)"},
    {"param": "blocks", "when": {}, "maximumParam": "file_size", "reason": "every block lies inside the test file: raise file_size"},
    {"param": "blocks", "when": {"direct": {"enum": [true]}}, "multipleOf": 512, "reason": "direct I/O moves whole blocks of the device's logical block size (512 B or 4 KiB): use buffered I/O for other sizes"},
    {"param": "iodepth", "when": {"engine": {"enum": ["psync"]}}, "maximum": 1, "reason": "engine psync does one I/O at a time per thread (pread/pwrite); use --engine io_uring or libaio, or --iodepth 1 with more --threads"},
    {"param": "max_repeats", "when": {"stable_cv": {"exclusiveMinimum": 0}}, "minimumParam": "repeats", "reason": "repeat-until-stable runs at least `repeats` phases"},
    {"param": "repeats", "when": {"sampler_ab": {"enum": [true]}}, "multipleOf": 2, "reason": "sampler_ab compares phases with and without the sampler in pairs: it needs an even `repeats`"},
    {"param": "no_sampler", "when": {"sampler_ab": {"enum": [true]}}, "enum": [false], "reason": "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"param": "stable_cv", "when": {"sampler_ab": {"enum": [true]}}, "maximum": 0, "reason": "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"}
   ]
  }
 },
 "gpu": {
  "v": 1,
  "kernel": "gpu",
  "title": "GPU (CUDA) arithmetic and memory throughput",
  "description": "FP32 and FP64 FMA FLOP/s, int32 multiply-add ops/s, device-memory triad bandwidth and pinned host<->device copy bandwidth of one CUDA device; every batch or phase checked against its closed form. CUDA runtime linked statically: needs only the NVIDIA driver.",
  "unit": "GFLOP/s",
  "parameters": {
   "type": "object",
   "additionalProperties": false,
   "properties": {
    "op": {"type": "array", "items": {"type": "string", "enum": ["fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h"]}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": ["fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h"], "description": "Operations, run one after another. fp32_fma / fp64_fma: chains of fused multiply-adds (FFMA / DFMA), GFLOP/s (an FMA is 2 FLOP). int32: chains of 32-bit integer multiply-adds (IMAD), GIOP/s (an IMAD is 2 ops). dram_bw: triad a = b + s*c over three device arrays far larger than L2, GB/s counting 2 reads and 1 write per element. h2d / d2h: cudaMemcpyAsync between pinned host memory and the device, GB/s."},
    "device": {"type": "integer", "minimum": 0, "maximum": 15, "default": 0, "description": "CUDA device index (as CUDA numbers them; CUDA_VISIBLE_DEVICES applies)."},
    "bytes": {"type": "integer", "minimum": 0, "maximum": 1000000000000, "default": 0, "description": "Buffer size for dram_bw (each of its three arrays) and for h2d / d2h (the host and the device buffer), bytes; 0 picks: dram_bw the larger of 512 MiB and 16x the L2 cache, h2d / d2h 256 MiB. dram_bw refuses arrays smaller than 4x L2 (that would measure the cache)."},
    "batch_ms": {"type": "number", "minimum": 1, "maximum": 1000, "default": 20, "description": "GPU time per batch, milliseconds: kernel launches (or copies) are sized and grouped to about this, and the count is published when each batch finishes."},
    "threads": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 1}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1], "description": "Host threads driving the device: one. It keeps the GPU busy with back-to-back launches; the parallelism is on the device (every SM filled, see the result's plan)."},
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3, "description": "Measured phases per thread count; each one gives a result line."},
    "duration_s": {"type": "number", "minimum": 0.2, "maximum": 86400, "default": 5, "description": "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    "warmup_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Warm-up phase before the measured phases of each thread count, seconds; its samples say warmup:true and it gives no result. 0 skips it."},
    "interval_s": {"type": "number", "minimum": 0.1, "maximum": 60, "default": 1, "description": "Sampling interval, seconds: one sample line per interval of every phase."},
    "stable_cv": {"type": "number", "minimum": 0, "maximum": 0.5, "default": 0, "description": "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. 0 = exactly `repeats` phases."},
    "max_repeats": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10, "description": "Upper bound on measured phases per thread count when stable_cv > 0."},
    "no_sampler": {"type": "boolean", "default": false, "description": "Run without the sampler (no sample lines), to show what sampling costs."},
    "sampler_ab": {"type": "boolean", "default": false, "description": "To measure what sampling costs within one process, on the same memory and threads: the measured phases come in pairs, one with the sampler and one without, the order swapped every other pair (with/without, without/with, ...); each result says `sampler`. Needs an even `repeats` and stable_cv 0."}
   },
   "x-rules": [
    {"param": "max_repeats", "when": {"stable_cv": {"exclusiveMinimum": 0}}, "minimumParam": "repeats", "reason": "repeat-until-stable runs at least `repeats` phases"},
    {"param": "repeats", "when": {"sampler_ab": {"enum": [true]}}, "multipleOf": 2, "reason": "sampler_ab compares phases with and without the sampler in pairs: it needs an even `repeats`"},
    {"param": "no_sampler", "when": {"sampler_ab": {"enum": [true]}}, "enum": [false], "reason": "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"param": "stable_cv", "when": {"sampler_ab": {"enum": [true]}}, "maximum": 0, "reason": "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"}
   ]
  }
 },
 "memory": {
  "v": 1,
  "kernel": "memory",
  "title": "Memory bandwidth and latency",
  "description": "Block ops copy (read+write), read, write, rand_read, rand_write: one operation per block (8 B .. 1 GiB), each thread on its own buffer of at least 4x L3 over all threads, so the bytes come from DRAM; MB/s (10^6 bytes/s) and ns_per_op. STREAM-variant Copy/Scale/Add/Triad with STREAM's byte counting, plain or non-temporal stores, arrays of at least 4x L3 each (smaller is refused unless allow_cache). latency: ns per dependent load through a random cycle of cache lines, 4 KiB to 1 GiB, each size labelled L1/L2/L3/DRAM. Memory is first touched by the pinned thread that uses it; every chunk is verified.",
  "unit": "MB/s",
  "parameters": {
   "type": "object",
   "additionalProperties": false,
   "properties": {
    "op": {"type": "string", "enum": ["copy", "read", "write", "rand_read", "rand_write", "stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_copy_nt", "stream_scale_nt", "stream_add_nt", "stream_triad_nt", "latency"], "default": "copy", "description": "copy (read+write), read, write, rand_read, rand_write: one operation per block (--blocks) over a buffer past the caches. stream_copy/_scale/_add/_triad: STREAM-variant kernels with STREAM's byte counting (16/16/24/24 bytes per element), plain stores; the _nt ones use non-temporal stores. latency: dependent loads, a random cycle through --sizes working sets. Rates in MB/s = 10^6 bytes/s (latency: Mload/s, plus ns_per_load)."},
    "blocks": {"type": "array", "items": {"type": "integer", "minimum": 8, "maximum": 1073741824}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [8, 8192, 8388608, 83886080], "description": "Block sizes in bytes for copy/read/write/rand_read/rand_write, multiples of 8. One operation moves one block (blocks of whole vectors in vector registers, others in 8-byte words); each thread walks its own buffer of max(block, buffer_bytes / threads) bytes, sequentially or at random block indexes. Each op also reports ns_per_op."},
    "buffer_bytes": {"type": "integer", "minimum": 0, "maximum": 8589934592, "default": 0, "description": "Block ops: bytes of buffer over all threads (copy: of the source; the destination is as large). 0: 4x the L3 of the CPUs in use, so the data comes from DRAM. Smaller than that is refused unless allow_cache."},
    "stores": {"type": "string", "enum": ["auto", "plain", "nt"], "default": "auto", "description": "copy, write, rand_write: plain stores (each line is read into the cache before it is written; that read is not counted), nt (non-temporal: written straight to memory, no read), or auto: nt when the working set is larger than the L3 and the writes cover whole lines (sequential ops, or random blocks of at least a line), as glibc's memcpy does for large copies; plain otherwise. Results say which was used."},
    "array_size": {"type": "integer", "minimum": 0, "maximum": 536870912, "default": 0, "description": "STREAM-variant ops: elements (8-byte doubles) per array, over all threads, as STREAM's STREAM_ARRAY_SIZE; each thread sweeps its own contiguous slice. 0: 4x the L3 of the CPUs in use per array (STREAM's rule). Smaller than that is refused unless allow_cache."},
    "sizes": {"type": "array", "items": {"type": "integer", "minimum": 4096, "maximum": 1073741824}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [4096, 16384, 65536, 262144, 1048576, 2097152, 4194304, 16777216, 33554432, 67108864, 268435456, 1073741824], "description": "latency: working sets in bytes per thread, multiples of the cache line; one node per line in one random cycle. Each is labelled with the cache it fits in (level L1, L2, L3, DRAM)."},
    "allow_cache": {"type": "boolean", "default": false, "description": "Block and STREAM-variant ops: run even when the working set is smaller than 4x L3, to measure a cache on purpose; results carry the level they fit in."},
    "hugepages": {"type": "boolean", "default": true, "description": "Ask for transparent huge pages (madvise MADV_HUGEPAGE) so that TLB misses do not add to the memory time; false asks for 4 KiB pages."},
    "isa": {"type": "string", "enum": ["auto", "avx512", "avx2", "scalar"], "default": "auto", "description": "Vector instructions of the loops. auto takes the widest this CPU supports; naming one it lacks ends with error code unsupported."},
    "threads": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 256}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1, 2, 4, 8], "description": "Thread counts, run one after another. Threads are pinned round-robin over the CPUs of the process affinity mask; more threads than CPUs is allowed and reported as oversubscribed."},
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3, "description": "Measured phases per thread count; each one gives a result line."},
    "duration_s": {"type": "number", "minimum": 0.2, "maximum": 86400, "default": 5, "description": "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    "warmup_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Warm-up phase before the measured phases of each thread count, seconds; its samples say warmup:true and it gives no result. 0 skips it."},
    "interval_s": {"type": "number", "minimum": 0.1, "maximum": 60, "default": 1, "description": "Sampling interval, seconds: one sample line per interval of every phase."},
    "stable_cv": {"type": "number", "minimum": 0, "maximum": 0.5, "default": 0, "description": "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. 0 = exactly `repeats` phases."},
    "max_repeats": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10, "description": "Upper bound on measured phases per thread count when stable_cv > 0."},
    "no_sampler": {"type": "boolean", "default": false, "description": "Run without the sampler (no sample lines), to show what sampling costs."},
    "sampler_ab": {"type": "boolean", "default": false, "description": "To measure what sampling costs within one process, on the same memory and threads: the measured phases come in pairs, one with the sampler and one without, the order swapped every other pair (with/without, without/with, ...); each result says `sampler`. Needs an even `repeats` and stable_cv 0."}
   },
   "x-rules": [
    {"param": "max_repeats", "when": {"stable_cv": {"exclusiveMinimum": 0}}, "minimumParam": "repeats", "reason": "repeat-until-stable runs at least `repeats` phases"},
    {"param": "repeats", "when": {"sampler_ab": {"enum": [true]}}, "multipleOf": 2, "reason": "sampler_ab compares phases with and without the sampler in pairs: it needs an even `repeats`"},
    {"param": "no_sampler", "when": {"sampler_ab": {"enum": [true]}}, "enum": [false], "reason": "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"param": "stable_cv", "when": {"sampler_ab": {"enum": [true]}}, "maximum": 0, "reason": "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"}
   ]
  }
 },
 "net": {
  "v": 1,
  "kernel": "net",
  "title": "Network throughput, latency and loss",
  "description": "TCP and UDP over loopback or between two hosts (one serves, one drives): stream throughput in Mbit/s counted by the receiver, UDP loss, and ping-pong round-trip latency (avg, p50, p99) in blocking or busy-poll mode; payloads are checked against a seeded pattern.",
  "unit": "Mbit/s",
  "parameters": {
   "type": "object",
   "additionalProperties": false,
   "properties": {
    "role": {"type": "string", "enum": ["loopback", "serve", "drive"], "default": "loopback", "description": "loopback: measure over this host's loopback with server threads in this process (no peer); serve: listen on --bind/--port, print a listening event with the port, serve drivers until SIGTERM or --serve_s; drive: measure against the server at --peer/--port."},
    "op": {"type": "string", "enum": ["tcp_stream", "udp_stream", "tcp_rr", "udp_rr"], "default": "tcp_stream", "description": "tcp_stream / udp_stream: one-way throughput in Mbit/s (10^6 bit/s) counted by the receiver (UDP: also datagrams sent, received, loss %); tcp_rr / udp_rr: ping-pong of one message, round trips/s plus round-trip latency avg/p50/p99 in µs (full round trip, not half)."},
    "sizes": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 4194304}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1, 1024, 65536], "description": "Message sizes in bytes, one configuration each: the size of every send (TCP) or datagram payload (UDP, at most 65507)."},
    "poll": {"type": "string", "enum": ["blocking", "busy"], "default": "blocking", "description": "Round-trip ops only. blocking: the thread sleeps in recv until the reply; busy: non-blocking recv in a spin loop on both ends, plus SO_BUSY_POLL where permitted. Busy needs a CPU per spinning thread."},
    "peer": {"type": "string", "minLength": 2, "maxLength": 45, "default": "127.0.0.1", "description": "drive: the server's IPv4 or IPv6 address literal (the address of the serving runner); host names are never looked up."},
    "port": {"type": "integer", "minimum": 0, "maximum": 65535, "default": 0, "description": "drive: the server's port (from its listening event), required; serve and loopback: the port to listen on, 0 takes a free one. UDP uses the same port number."},
    "bind": {"type": "string", "minLength": 2, "maxLength": 45, "default": "127.0.0.1", "description": "serve and loopback: the local IPv4 or IPv6 address literal to listen on (0.0.0.0 or :: for every address)."},
    "server_cpu": {"type": "integer", "minimum": -1, "maximum": 4095, "default": -1, "description": "CPU of the server thread of each stream. -1: loopback puts it on the affinity CPU after its stream's client CPU (across vCPUs when there are two or more); serve leaves it to the OS. Give the same CPU as --client_cpu to measure both ends on one vCPU."},
    "client_cpu": {"type": "integer", "minimum": -1, "maximum": 4095, "default": -1, "description": "CPU of every driving (client) thread. -1: stream i runs on the i-th CPU of the affinity mask, round-robin."},
    "sockbuf_kib": {"type": "integer", "minimum": 0, "maximum": 65536, "default": 0, "description": "SO_SNDBUF and SO_RCVBUF of every data socket, both ends, in KiB; 0 keeps the OS default (and TCP autotuning), except the udp_stream receiver, which takes 4096 KiB."},
    "serve_s": {"type": "number", "minimum": 1, "maximum": 604800, "default": 3600, "description": "serve: stop serving after this many seconds even without SIGTERM."},
    "streams": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 8}, "minItems": 1, "maxItems": 64, "uniqueItems": true, "default": [1], "description": "Concurrent streams, run one after another: each is its own thread (pinned) with its own connection and, in loopback, its own server thread."},
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3, "description": "Measured phases per thread count; each one gives a result line."},
    "duration_s": {"type": "number", "minimum": 0.2, "maximum": 86400, "default": 5, "description": "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    "warmup_s": {"type": "number", "minimum": 0, "maximum": 600, "default": 1, "description": "Warm-up phase before the measured phases of each thread count, seconds; its samples say warmup:true and it gives no result. 0 skips it."},
    "interval_s": {"type": "number", "minimum": 0.1, "maximum": 60, "default": 1, "description": "Sampling interval, seconds: one sample line per interval of every phase."},
    "stable_cv": {"type": "number", "minimum": 0, "maximum": 0.5, "default": 0, "description": "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. 0 = exactly `repeats` phases."},
    "max_repeats": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10, "description": "Upper bound on measured phases per thread count when stable_cv > 0."},
    "no_sampler": {"type": "boolean", "default": false, "description": "Run without the sampler (no sample lines), to show what sampling costs."},
    "sampler_ab": {"type": "boolean", "default": false, "description": "To measure what sampling costs within one process, on the same memory and threads: the measured phases come in pairs, one with the sampler and one without, the order swapped every other pair (with/without, without/with, ...); each result says `sampler`. Needs an even `repeats` and stable_cv 0."}
   },
   "x-rules": [
    {"param": "sizes", "when": {"op": {"enum": ["udp_stream", "udp_rr"]}, "role": {"enum": ["loopback", "drive"]}}, "maximum": 65507, "reason": "one UDP datagram carries at most 65507 bytes of payload; give sizes up to 65507 for UDP"},
    {"param": "poll", "when": {"op": {"enum": ["tcp_stream", "udp_stream"]}, "role": {"enum": ["loopback", "drive"]}}, "enum": ["blocking"], "reason": "poll busy applies to tcp_rr and udp_rr (round trips); stream ops always block, like iperf3"},
    {"param": "max_repeats", "when": {"stable_cv": {"exclusiveMinimum": 0}}, "minimumParam": "repeats", "reason": "repeat-until-stable runs at least `repeats` phases"},
    {"param": "repeats", "when": {"sampler_ab": {"enum": [true]}}, "multipleOf": 2, "reason": "sampler_ab compares phases with and without the sampler in pairs: it needs an even `repeats`"},
    {"param": "no_sampler", "when": {"sampler_ab": {"enum": [true]}}, "enum": [false], "reason": "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"param": "stable_cv", "when": {"sampler_ab": {"enum": [true]}}, "maximum": 0, "reason": "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"}
   ]
  }
 }
}''')
