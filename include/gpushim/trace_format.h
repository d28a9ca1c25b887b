/* SPDX-License-Identifier: MIT */
/*
 * trace_format.h - the on-disk gpushim trace: the specification, shared by the shim (writer) and
 * the analyzer (reader). Only libc headers; fixed-width little-endian structs, 8-byte aligned,
 * every size pinned by a static assert. Nothing here allocates or does I/O.
 *
 * File layout
 *   struct trace_file_header, then its strings (header_bytes in all, a multiple of 8)
 *   chunk*: struct trace_chunk_header, then one complete zstd frame of chunk.zstd_bytes bytes that
 *           decompresses to exactly chunk.raw_bytes bytes of records. A zstd skippable frame
 *           may follow it inside zstd_bytes: the shim pads an END chunk it rewrites in place
 *           (CUDA calls after the process's END counted as lost) to cover the old one.
 *   A killed process leaves a file that ends inside a chunk; readers decode every complete chunk
 *   and report the file as truncated. A cleanly closed trace ends with a chunk holding TRACE_REC_END.
 *   Readers refuse a chunk whose raw_bytes exceed TRACE_MAX_CHUNK_RATIO times its zstd_bytes, as
 *   a decompression bomb: the shim's chunks of a polling loop (alike CALL records) reach 59:1 at
 *   the default zstd level and 90:1 at level 9; a bomb is thousands to one.
 *
 * Records
 *   Every record starts with struct trace_rec_hdr {type, size, dt_ns}. size counts the header,
 *   is a multiple of 8 and at least 8. A reader skips types it does not know by size and accepts
 *   a size larger than the struct it knows (tail growth); a size smaller than the struct it knows
 *   is an error.
 *
 *   Records come in two streams inside a chunk:
 *   - meta records (STRING, FUNC, DEVICE, API_DEF, OCCUPANCY, GPU_*, NOTE, END, ...): no time base;
 *     their dt_ns is 0. Every id they define (string, function) is defined before the first
 *     thread record that refers to it in file order.
 *   - thread records follow a TRACE_REC_BLOCK that names the thread and gives the time base.
 *     Each record's start time = previous start time (or BLOCK.base_ns) + hdr.dt_ns, in
 *     CLOCK_MONOTONIC nanoseconds; TRACE_REC_TIME sets the current time absolutely (used when a
 *     delta does not fit in 32 bits). A block ends at the next BLOCK or at the end of the chunk.
 *
 * Version policy
 *   TRACE_VERSION_MAJOR changes when an existing layout or meaning changes; readers refuse
 *   another major with a message naming both versions. TRACE_VERSION_MINOR changes when a record
 *   type is added or a record grows at its tail. A type number is never reused: a retired type
 *   leaves a "N was X: never reuse" line in the enum. Every change gets a line in README.md's
 *   format changelog and a fixture in tests/traces/.
 */
#ifndef GPUSHIM_TRACE_FORMAT_H
#define GPUSHIM_TRACE_FORMAT_H

#include <stdint.h>

#define TRACE_MAGIC		"GPUSHIM"	/* 8 bytes with the NUL */
#define TRACE_VERSION_MAJOR	1
#define TRACE_VERSION_MINOR	9
#define TRACE_CHUNK_MAGIC	0x4b484347u	/* "GCHK" little-endian */

/* Limits a reader enforces before trusting a length (and the writer never exceeds). */
#define TRACE_MAX_HEADER_BYTES	(1u << 20)
#define TRACE_MAX_CHUNK_RAW	(16u << 20)
#define TRACE_MAX_CHUNK_RATIO	1024u	/* raw_bytes / zstd_bytes; see trace_reader.c */
#define TRACE_MAX_RECORD	0xfff8u

/* ---- File and chunk headers ---- */

enum trace_file_flags {
	TRACE_FILE_FORKED = 1u << 0,	/* written by a child after fork() */
};

struct trace_file_header {
	char magic[8];			/* TRACE_MAGIC, NUL-terminated */
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_bytes;		/* this struct + strings + padding; chunks start here */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_mono_ns;		/* CLOCK_MONOTONIC and CLOCK_REALTIME read back to back */
	uint64_t start_real_ns;
	uint32_t flags;			/* enum trace_file_flags */
	uint16_t shim_version_len;	/* strings follow the struct in this order, not NUL-terminated */
	uint16_t host_len;
	uint32_t cmdline_len;		/* argv joined by NUL bytes */
	int32_t rank;			/* RANK / SLURM_PROCID / ...; -1 when none was set */
	uint64_t _reserved;
};
_Static_assert(sizeof(struct trace_file_header) == 64, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_chunk_header {
	uint32_t magic;			/* TRACE_CHUNK_MAGIC */
	uint32_t seq;			/* 0, 1, 2, ... in file order */
	uint32_t raw_bytes;		/* decompressed size, <= TRACE_MAX_CHUNK_RAW */
	uint32_t zstd_bytes;		/* size of the zstd frame that follows */
};
_Static_assert(sizeof(struct trace_chunk_header) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* ---- Records ---- */

enum trace_rec_type {
	TRACE_REC_PAD		= 0,	/* ring-internal; never written to a file */
	TRACE_REC_STRING	= 1,	/* meta: interned name */
	TRACE_REC_API_DEF	= 2,	/* meta: entry-point id -> name, family */
	TRACE_REC_BLOCK		= 3,	/* starts a run of one thread's records */
	TRACE_REC_TIME		= 4,	/* thread: sets the current time absolutely */
	TRACE_REC_LOST		= 5,	/* thread: records dropped by a full buffer before this one */
	TRACE_REC_END		= 6,	/* meta: totals; present only in cleanly closed traces */
	TRACE_REC_DEVICE	= 7,	/* meta: one GPU's properties */
	TRACE_REC_FUNC		= 8,	/* meta: kernel handle -> name and attributes */
	TRACE_REC_OCCUPANCY	= 9,	/* meta: occupancy-calculator result for a launch shape */
	TRACE_REC_NOTE		= 10,	/* meta: timed event (shim disabled, CUPTI yielded, ...) */
	TRACE_REC_LAUNCH	= 16,	/* thread: kernel launch of any flavour */
	TRACE_REC_GRAPH_LAUNCH	= 17,	/* thread: cuGraphLaunch */
	TRACE_REC_HOST_FUNC	= 18,	/* thread: cuLaunchHostFunc / cuStreamAddCallback */
	TRACE_REC_MEM		= 19,	/* thread: allocation or release */
	TRACE_REC_COPY		= 20,	/* thread: memcpy of any flavour */
	TRACE_REC_SET		= 21,	/* thread: memset of any flavour */
	TRACE_REC_SYNC		= 22,	/* thread: synchronize / query / wait / record */
	TRACE_REC_CAPTURE	= 23,	/* thread: stream capture begin / end */
	TRACE_REC_GRAPH		= 24,	/* thread: graph instantiate / exec destroy / upload */
	TRACE_REC_MODULE	= 25,	/* thread: module / library load / unload */
	TRACE_REC_CALL		= 26,	/* thread: any other intercepted call */
	TRACE_REC_LAUNCH_REPEAT	= 27,	/* (1.1) thread: the thread's previous LAUNCH again */
	TRACE_REC_LAUNCH_RUN	= 28,	/* (1.2) thread: that LAUNCH again, N times in a row */
	TRACE_REC_LAUNCH_REFS	= 29,	/* (1.3) thread: launches like LAUNCHes of the chunk */
	TRACE_REC_LAUNCH_GAP_RUN = 30,	/* (1.4) thread: a LAUNCH_RUN timed by the gaps between */
	TRACE_REC_GPU_KERNEL	= 32,	/* meta: CUPTI kernel execution */
	TRACE_REC_GPU_MEMCPY	= 33,	/* meta: CUPTI memcpy execution (incl. peer) */
	TRACE_REC_GPU_MEMSET	= 34,	/* meta: CUPTI memset execution */
	TRACE_REC_GPU_INFO	= 35,	/* meta: CUPTI session state and loss counters */
	TRACE_REC_GPU_CORR	= 36,	/* meta: CUPTI correlation id -> the shim's call (older shims) */
	TRACE_REC_GPU_API	= 37,	/* meta: CUPTI API record (thread, interval) */
	TRACE_REC_GPU_KERNEL_RUN = 38,	/* (1.3) meta: GPU_KERNELs of known shapes, as columns */
	TRACE_REC_GPU_API_RUN	= 39,	/* (1.3) meta: GPU_APIs as columns */
	TRACE_REC_PM_CONFIG	= 40,	/* (1.1) meta: hardware-counter sampling set-up of a device */
	TRACE_REC_PM_SAMPLE	= 41,	/* (1.1) meta: one counter sample interval */
	TRACE_REC_NVTX_DOMAIN	= 42,	/* (1.6) meta: an NVTX domain's id and name */
	TRACE_REC_STACK		= 43,	/* (1.9) meta: a call stack, interned */
	TRACE_REC_PC		= 44,	/* (1.9) meta: where a native frame's address lies */
	TRACE_REC_NVTX_PUSH	= 48,	/* (1.6) thread: an NVTX range pushed on this thread */
	TRACE_REC_NVTX_POP	= 49,	/* (1.6) thread: the innermost range of a domain popped */
	TRACE_REC_NVTX_START	= 50,	/* (1.6) thread: an NVTX start/end range started */
	TRACE_REC_NVTX_END	= 51,	/* (1.6) thread: ... ended (on any thread) */
	TRACE_REC_NVTX_MARK	= 52,	/* (1.6) thread: an NVTX instant */
	TRACE_REC_CALL_STACK	= 53,	/* (1.9) thread: the stack of the call just recorded */
};

struct trace_rec_hdr {
	uint16_t type;			/* enum trace_rec_type */
	uint16_t size;			/* bytes including this header; multiple of 8 */
	uint32_t dt_ns;			/* thread records: start time delta; meta records: 0 */
};
_Static_assert(sizeof(struct trace_rec_hdr) == 8, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* STRING: id is defined once per trace; ids start at 1, 0 means "none". */
struct trace_rec_string {
	struct trace_rec_hdr hdr;
	uint32_t id;
	uint32_t len;			/* bytes of text that follow, no NUL; padded to 8 */
	/* char text[len]; */
};
_Static_assert(sizeof(struct trace_rec_string) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_api_family {
	TRACE_FAM_INIT = 1,		/* cuInit, cuGetProcAddress, context teardown */
	TRACE_FAM_LAUNCH = 2,
	TRACE_FAM_MEMORY = 3,		/* allocation, release, VMM */
	TRACE_FAM_COPY = 4,
	TRACE_FAM_SET = 5,
	TRACE_FAM_SYNC = 6,
	TRACE_FAM_CAPTURE = 7,		/* stream capture and graph objects */
	TRACE_FAM_MODULE = 8,
	TRACE_FAM_OTHER = 9,
};

enum trace_api_flags {
	TRACE_API_PER_THREAD = 1u << 0,	/* _ptsz / _ptds variant: NULL stream = per-thread stream */
	TRACE_API_ASYNC = 1u << 1,	/* stream-ordered by contract */
};

/* API_DEF: the writer lists every entry point it may record, so ids are per-trace. */
struct trace_rec_api_def {
	struct trace_rec_hdr hdr;
	uint16_t api;
	uint8_t family;			/* enum trace_api_family */
	uint8_t flags;			/* enum trace_api_flags */
	uint32_t name;			/* STRING id of the exported symbol name */
};
_Static_assert(sizeof(struct trace_rec_api_def) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_block {
	struct trace_rec_hdr hdr;
	uint32_t tid;			/* gettid() of the recording thread */
	uint32_t thread_index;		/* 0, 1, ... in order of first record; high half of corr ids */
	uint64_t base_ns;		/* start time of the record before the first in this block */
};
_Static_assert(sizeof(struct trace_rec_block) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_time {
	struct trace_rec_hdr hdr;	/* dt_ns is 0 */
	uint64_t ts_ns;
};
_Static_assert(sizeof(struct trace_rec_time) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_lost {
	struct trace_rec_hdr hdr;
	uint64_t nr_records;		/* dropped since the previous LOST of this thread */
	uint64_t nr_bytes;
};
_Static_assert(sizeof(struct trace_rec_lost) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_end_reason {
	TRACE_END_EXIT = 1,		/* process exit (destructor) */
	TRACE_END_DISABLED = 2,		/* the shim turned itself off; see the NOTE before */
	TRACE_END_SIGNAL = 3,		/* (1.1) a fatal signal the program does not handle; NOTE SIGNAL */
	TRACE_END_EXEC = 4,		/* (1.1) the program replaced itself by exec; NOTE EXEC before */
};

struct trace_rec_end {
	struct trace_rec_hdr hdr;
	uint64_t nr_records;		/* records written, this one excluded */
	uint64_t nr_lost;		/* records dropped in all threads and the meta stream */
	uint64_t nr_chunks;		/* chunks before the one holding this record */
	uint64_t end_ns;
	uint32_t reason;		/* enum trace_end_reason */
	uint32_t nr_threads;
};
_Static_assert(sizeof(struct trace_rec_end) == 48, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_device {
	struct trace_rec_hdr hdr;
	uint32_t ordinal;
	uint32_t name;			/* STRING id */
	uint64_t total_bytes;
	uint32_t sm_count;
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t max_threads_per_sm;
	uint32_t max_blocks_per_sm;
	uint32_t max_threads_per_block;
	uint32_t regs_per_sm;
	uint32_t smem_per_sm;
	uint32_t clock_khz;
	uint32_t mem_clock_khz;
	uint32_t mem_bus_bits;
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_device) == 72, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_func_kind {
	TRACE_FUNC_UNKNOWN = 0,		/* neither cuFuncGetName nor cuKernelGetName answered */
	TRACE_FUNC_FUNCTION = 1,	/* CUfunction (cuModuleGetFunction: Triton, XLA) */
	TRACE_FUNC_KERNEL = 2,		/* CUkernel (cudart, cuBLAS: cuLibraryGetKernel) */
};

enum trace_func_have {
	TRACE_FUNC_HAVE_REGS = 1u << 0,
	TRACE_FUNC_HAVE_SMEM = 1u << 1,
	TRACE_FUNC_HAVE_MAX_THREADS = 1u << 2,
	TRACE_FUNC_HAVE_LOCAL = 1u << 3,
};

/* FUNC: once per kernel handle (again after a module unload, which may recycle handles). */
struct trace_rec_func {
	struct trace_rec_hdr hdr;
	uint64_t handle;
	uint32_t id;			/* referenced by LAUNCH.func; starts at 1 */
	uint32_t name;			/* STRING id, 0 when unknown */
	uint16_t kind;			/* enum trace_func_kind */
	uint16_t regs_per_thread;
	uint32_t static_smem_bytes;
	uint32_t max_threads_per_block;
	uint32_t local_bytes_per_thread;
	uint32_t have;			/* enum trace_func_have: which attributes were answered */
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_func) == 48, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* OCCUPANCY: once per (func, block threads, dynamic shared memory, device). */
struct trace_rec_occupancy {
	struct trace_rec_hdr hdr;
	uint32_t func;
	uint32_t block_threads;
	uint32_t dyn_smem_bytes;
	int32_t device;
	uint32_t max_blocks_per_sm;	/* cuOccupancyMaxActiveBlocksPerMultiprocessor */
	uint32_t result;		/* CUresult of the query; max_blocks_per_sm is 0 unless 0 */
};
_Static_assert(sizeof(struct trace_rec_occupancy) == 32, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_note_kind {
	TRACE_NOTE_DISABLED = 1,	/* the shim stopped recording; text says why */
	TRACE_NOTE_CUPTI_ON = 2,	/* GPU timestamps recorded from here on */
	TRACE_NOTE_CUPTI_OFF = 3,	/* GPU timestamps absent from here on (yielded, failed, absent) */
	TRACE_NOTE_WARNING = 4,
	TRACE_NOTE_DOORS = 5,		/* at the end: wrappers handed out per door */
	TRACE_NOTE_SIGNAL = 6,		/* (1.1) the signal ending the process: "SIGSEGV (11)" */
	TRACE_NOTE_EXEC = 7,		/* (1.1) the program called exec; text: the path (exec may fail) */
	TRACE_NOTE_PM_ON = 8,		/* (1.1) hardware counters sampled from here on; text: set-up */
	TRACE_NOTE_PM_OFF = 9,		/* (1.1) no (more) hardware counters; text: why */
	TRACE_NOTE_PM_SETUP = 10,	/* (1.1) counter set-up begins (ends at PM_ON or PM_OFF) */
	TRACE_NOTE_CLOCK = 11,		/* (1.5) the hooks' clock: "TSC at 2.1000 GHz, fitted to ..."
					 * from here on, or "clock_gettime: why not the TSC" */
	TRACE_NOTE_MODE = 12,		/* (1.8) the recording mode, once, before any CUPTI note:
					 * "full", "host", or "sampled: GPU timestamps for T ms every
					 * P ms" (then each window is a CUPTI_ON note, "sampled window
					 * N", and its end a CUPTI_OFF note, "sampled window N ends") */
	TRACE_NOTE_STACKS = 13,		/* (1.9) at the end: call-stack capture's settings and
					 * counts (see "Call stacks" below) */
};

struct trace_rec_note {
	struct trace_rec_hdr hdr;
	uint64_t ts_ns;
	uint32_t kind;			/* enum trace_note_kind */
	uint32_t text;			/* STRING id */
};
_Static_assert(sizeof(struct trace_rec_note) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* ---- Intercepted calls (thread records) ---- */

enum trace_call_flags {
	TRACE_CALL_DUR_US = 1u << 0,	/* dur is in microseconds (the call took >= 2^32 ns) */
	TRACE_CALL_CAPTURING = 1u << 1,	/* issued while a stream capture was active in the process */
};

/* Every intercepted-call record starts with this. */
struct trace_call {
	struct trace_rec_hdr hdr;	/* dt_ns -> the time the hook was entered */
	uint32_t dur;			/* time inside the real call, ns (see TRACE_CALL_DUR_US) */
	uint32_t result;		/* CUresult returned to the caller, unchanged */
	uint16_t api;			/* API_DEF id */
	uint16_t flags;			/* enum trace_call_flags */
	uint32_t seq;			/* per-thread correlation number (1, 2, ...); 0 = none */
};
_Static_assert(sizeof(struct trace_call) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* The external correlation id earlier shims pushed to CUPTI around a call (GPU_CORR.ext_id):
 * thread_index in the high half, seq in the low. */
#define TRACE_CORR_ID(thread_index, seq) (((uint64_t)(thread_index) << 32) | (uint32_t)(seq))

struct trace_rec_launch {
	struct trace_call call;
	uint64_t stream;		/* CUstream as passed (0 = NULL stream, see API flags) */
	uint32_t func;			/* FUNC id; 0 if the handle was never resolved */
	uint32_t dyn_smem_bytes;
	uint32_t grid[3];
	uint16_t block[3];
	uint16_t cluster[3];		/* cluster dims of cuLaunchKernelEx, 0 when none */
};
_Static_assert(sizeof(struct trace_rec_launch) == 64, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/*
 * LAUNCH_REPEAT (1.1): a launch equal to the same thread's previous LAUNCH in the same chunk in
 * everything but its start time (hdr.dt_ns), duration and correlation number: entry point,
 * result, flags, stream, kernel, geometry. The writer substitutes it (16 bytes for 64); readers
 * expand it back into that LAUNCH. Without a previous LAUNCH of the thread in the chunk it is
 * corrupt: a chunk stays decodable on its own.
 */
struct trace_rec_launch_repeat {
	struct trace_rec_hdr hdr;	/* dt_ns -> the time the hook was entered */
	uint32_t dur;
	uint32_t seq;
};
_Static_assert(sizeof(struct trace_rec_launch_repeat) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/*
 * LAUNCH_RUN (1.2): COUNT launches in a row, each a LAUNCH_REPEAT of the same LAUNCH (the
 * thread's previous one in the chunk), with consecutive correlation numbers: launch i has
 * seq + i. Their time deltas and durations follow as two columns of COUNT unsigned LEB128
 * varints each (at most 5 bytes, values < 2^32), deltas first, then zero padding to 8 bytes.
 * A launch loop's only changing fields, stored apart from everything that repeats, cost zstd
 * little more than their entropy. hdr.dt_ns is 0; the first delta is in the column.
 */
struct trace_rec_launch_run {
	struct trace_rec_hdr hdr;
	uint32_t count;			/* launches, >= 1 */
	uint32_t seq;			/* the first launch's correlation number */
	/* uint8_t columns[]: COUNT dt_ns varints, then COUNT dur varints */
};
_Static_assert(sizeof(struct trace_rec_launch_run) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/*
 * LAUNCH_GAP_RUN (1.4): a LAUNCH_RUN (same struct, same columns) whose time column, after its
 * first value (a delta, as in LAUNCH_RUN), holds for each launch the gap since the previous one
 * returned: its delta minus the previous launch's duration. The duration column holds that
 * duration already, so the time column shrinks to what the program spends between launches
 * (a launch storm: 1.80 -> 1.47 bytes a launch after zstd). A writer writes it only where no
 * launch starts before its predecessor returned, and every delta it stands for is below 2^32.
 * A 1.3 reader skips it and misses those launches, as a 1.1 reader does LAUNCH_RUN.
 */

/* The most bytes a LAUNCH_RUN or LAUNCH_GAP_RUN of @count launches takes. */
#define TRACE_LAUNCH_RUN_MAX_BYTES(count) \
	((sizeof(struct trace_rec_launch_run) + (size_t)(count) * 10 + 7) & ~(size_t)7)

/*
 * LAUNCH_REFS (1.3): COUNT launches of the block's thread in a row, each equal to a LAUNCH record
 * earlier in the same chunk (of any thread) in everything but its start time, duration and
 * correlation number: entry point, result, flags, stream, kernel, geometry. After the struct
 * come four columns of COUNT unsigned LEB128 varints each (at most 5 bytes, values < 2^32), then
 * zero padding to 8:
 *   shape  which LAUNCH record of the chunk (0: its first)
 *   dt     the launch's time delta, as hdr.dt_ns of a LAUNCH
 *   dur    its duration
 *   seq    zigzag of its correlation number minus the previous one's (the first: minus seq),
 *          modulo 2^32 (see GPU_KERNEL_RUN)
 * A program's launches are a few dozen kernels and shapes repeated: each costs a few bytes
 * instead of 64. hdr.dt_ns is 0. Readers hand each launch out as the LAUNCH it stands for.
 * LAUNCH_REPEAT, LAUNCH_RUN and LAUNCH_GAP_RUN keep meaning the thread's previous LAUNCH record,
 * never a launch of a LAUNCH_REFS, and a writer writes one only where that record is the
 * thread's previous launch: a reader that skips LAUNCH_REFS (1.2) misses its launches and
 * nothing else.
 */
struct trace_rec_launch_refs {
	struct trace_rec_hdr hdr;
	uint32_t count;			/* launches, >= 1 */
	uint32_t seq;			/* the first launch's number difference is from this */
	/* uint8_t columns[]: shape, dt, dur, seq */
};
_Static_assert(sizeof(struct trace_rec_launch_refs) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

#define TRACE_LAUNCH_REFS_COLUMNS	4

struct trace_rec_graph_launch {
	struct trace_call call;
	uint64_t stream;
	uint64_t exec;			/* CUgraphExec */
};
_Static_assert(sizeof(struct trace_rec_graph_launch) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_host_func {
	struct trace_call call;
	uint64_t stream;
	uint64_t fn;			/* host function address */
};
_Static_assert(sizeof(struct trace_rec_host_func) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_mem_kind {
	TRACE_MEM_DEVICE = 1,		/* cuMemAlloc */
	TRACE_MEM_PITCH = 2,		/* cuMemAllocPitch; bytes = pitch * height */
	TRACE_MEM_MANAGED = 3,		/* cuMemAllocManaged */
	TRACE_MEM_ASYNC = 4,		/* cuMemAllocAsync / cuMemFreeAsync (stream-ordered) */
	TRACE_MEM_POOL = 5,		/* cuMemAllocFromPoolAsync; aux = pool */
	TRACE_MEM_HOST = 6,		/* cuMemAllocHost / cuMemHostAlloc / cuMemFreeHost (pinned) */
	TRACE_MEM_HOST_REGISTER = 7,	/* cuMemHostRegister / Unregister */
	TRACE_MEM_VMM_PHYS = 8,		/* cuMemCreate / cuMemRelease; addr = allocation handle */
	TRACE_MEM_VMM_VA = 9,		/* cuMemAddressReserve / Free */
	TRACE_MEM_VMM_MAP = 10,		/* cuMemMap / Unmap; aux = allocation handle */
	TRACE_MEM_VMM_ACCESS = 11,	/* cuMemSetAccess */
};

enum trace_mem_op {
	TRACE_MEM_ALLOC = 1,
	TRACE_MEM_FREE = 2,
	TRACE_MEM_OTHER = 3,
};

struct trace_rec_mem {
	struct trace_call call;
	uint64_t addr;			/* 0 when the call failed before producing one */
	uint64_t bytes;			/* 0 for frees of device pointers: the reader matches by addr */
	uint64_t stream;		/* stream-ordered kinds */
	uint64_t aux;			/* pitch, pool, or VMM allocation handle */
	uint16_t kind;			/* enum trace_mem_kind */
	uint16_t op;			/* enum trace_mem_op */
	int32_t device;			/* device ordinal of the current context, -1 unknown */
};
_Static_assert(sizeof(struct trace_rec_mem) == 64, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_copy_dir {
	TRACE_COPY_UNKNOWN = 0,		/* unified addressing (cuMemcpy, cuMemcpyAsync, batch) */
	TRACE_COPY_H2D = 1,
	TRACE_COPY_D2H = 2,
	TRACE_COPY_D2D = 3,
	TRACE_COPY_H2H = 4,
	TRACE_COPY_PEER = 5,
	TRACE_COPY_D2A = 6,
	TRACE_COPY_A2D = 7,
	TRACE_COPY_H2A = 8,
	TRACE_COPY_A2H = 9,
	TRACE_COPY_A2A = 10,
};

enum trace_copy_shape {
	TRACE_COPY_1D = 1,
	TRACE_COPY_2D = 2,
	TRACE_COPY_3D = 3,
	TRACE_COPY_BATCH = 4,		/* count = number of copies in the batch */
};

struct trace_rec_copy {
	struct trace_call call;
	uint64_t dst;			/* device pointer, host pointer or CUarray */
	uint64_t src;
	uint64_t bytes;			/* total bytes moved */
	uint64_t stream;
	uint16_t dir;			/* enum trace_copy_dir */
	uint16_t shape;			/* enum trace_copy_shape */
	uint32_t count;
};
_Static_assert(sizeof(struct trace_rec_copy) == 64, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_set {
	struct trace_call call;
	uint64_t dst;
	uint64_t bytes;			/* elements * element size * rows */
	uint64_t stream;
	uint32_t value;
	uint16_t elem_bytes;		/* 1, 2 or 4 */
	uint16_t _pad;
};
_Static_assert(sizeof(struct trace_rec_set) == 56, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_sync_kind {
	TRACE_SYNC_CTX = 1,		/* cuCtxSynchronize[_v2]: target = ctx (0 = current) */
	TRACE_SYNC_STREAM = 2,		/* cuStreamSynchronize: target = stream */
	TRACE_SYNC_EVENT = 3,		/* cuEventSynchronize: target = event */
	TRACE_SYNC_STREAM_WAIT_EVENT = 4, /* device-side wait: target = stream, aux = event */
	TRACE_SYNC_STREAM_QUERY = 5,
	TRACE_SYNC_EVENT_QUERY = 6,
	TRACE_SYNC_EVENT_RECORD = 7,	/* target = event, aux = stream */
};

struct trace_rec_sync {
	struct trace_call call;
	uint64_t target;
	uint64_t aux;
	uint16_t kind;			/* enum trace_sync_kind */
	uint16_t _pad;
	uint32_t _pad2;
};
_Static_assert(sizeof(struct trace_rec_sync) == 48, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_capture_op {
	TRACE_CAPTURE_BEGIN = 1,
	TRACE_CAPTURE_END = 2,
};

struct trace_rec_capture {
	struct trace_call call;
	uint64_t stream;
	uint64_t graph;			/* END: the captured CUgraph; BEGIN_TO_GRAPH: the target */
	uint32_t op;			/* enum trace_capture_op */
	uint32_t mode;			/* CUstreamCaptureMode */
};
_Static_assert(sizeof(struct trace_rec_capture) == 48, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_graph_op {
	TRACE_GRAPH_INSTANTIATE = 1,	/* exec <- graph */
	TRACE_GRAPH_EXEC_DESTROY = 2,
	TRACE_GRAPH_UPLOAD = 3,
};

struct trace_rec_graph {
	struct trace_call call;
	uint64_t exec;
	uint64_t graph;
	uint64_t stream;
	uint32_t op;			/* enum trace_graph_op */
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_graph) == 56, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_module_op {
	TRACE_MODULE_LOAD = 1,
	TRACE_MODULE_UNLOAD = 2,
};

enum trace_module_kind {
	TRACE_MODULE_MODULE = 1,	/* CUmodule */
	TRACE_MODULE_LIBRARY = 2,	/* CUlibrary */
};

struct trace_rec_module {
	struct trace_call call;
	uint64_t handle;
	uint16_t op;			/* enum trace_module_op */
	uint16_t kind;			/* enum trace_module_kind */
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_module) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_call {
	struct trace_call call;
	uint64_t arg0;			/* entry-point specific, see README's record table */
	uint64_t arg1;
};
_Static_assert(sizeof(struct trace_rec_call) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* ---- GPU activity from CUPTI (meta records; absolute CLOCK_MONOTONIC times) ---- */

/*
 * How GPU work is joined to the intercepted call that caused it (the reader does the join):
 *   1. GPU_CORR maps a CUPTI correlation id to the external id the shim pushed around the call:
 *      TRACE_CORR_ID(thread_index, seq) of a LAUNCH/GRAPH_LAUNCH/COPY/SET record. Written by
 *      earlier shims only (this one pushes nothing: GPU_API joins the same operations, and
 *      cudart's launch path never produced GPU_CORR); readers still honour it.
 *   2. Otherwise GPU_API gives the thread and interval of the CUDA API call (driver or runtime)
 *      that owns the correlation id; the intercepted call on that thread whose interval
 *      overlaps it is the one (cudart's launch path reports the runtime call only).
 * Kernels replayed from a CUDA graph carry the correlation id of their graph launch and a
 * nonzero graph_id.
 */
struct trace_rec_gpu_kernel {
	struct trace_rec_hdr hdr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t graph_node;
	uint32_t cupti_corr;
	uint32_t device;
	uint32_t context;
	uint32_t stream;		/* CUPTI stream id */
	uint32_t graph_id;
	uint32_t name;			/* STRING id of the mangled name */
	uint32_t grid[3];
	uint16_t block[3];
	uint16_t regs_per_thread;
	uint32_t static_smem_bytes;
	uint32_t dyn_smem_bytes;
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_gpu_kernel) == 88, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_gpu_memkind {		/* CUpti_ActivityMemoryKind, kept by value */
	TRACE_GPU_MEM_UNKNOWN = 0,
	TRACE_GPU_MEM_PAGEABLE = 1,
	TRACE_GPU_MEM_PINNED = 2,
	TRACE_GPU_MEM_DEVICE = 3,
	TRACE_GPU_MEM_ARRAY = 4,
	TRACE_GPU_MEM_MANAGED = 5,
};

enum trace_gpu_copy_kind {		/* CUpti_ActivityMemcpyKind, kept by value */
	TRACE_GPU_COPY_HTOD = 1,
	TRACE_GPU_COPY_DTOH = 2,
	TRACE_GPU_COPY_DTOD = 8,
	TRACE_GPU_COPY_HTOH = 9,
	TRACE_GPU_COPY_PTOP = 10,
};

struct trace_rec_gpu_memcpy {
	struct trace_rec_hdr hdr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint64_t graph_node;
	uint32_t cupti_corr;
	uint32_t device;		/* peer copies: the device that ran the copy */
	uint32_t context;
	uint32_t stream;
	uint32_t graph_id;
	uint8_t copy_kind;		/* enum trace_gpu_copy_kind (other CUPTI values possible) */
	uint8_t src_kind;		/* enum trace_gpu_memkind */
	uint8_t dst_kind;
	uint8_t is_async;
	uint32_t src_device;		/* peer copies; otherwise = device */
	uint32_t dst_device;
};
_Static_assert(sizeof(struct trace_rec_gpu_memcpy) == 72, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_gpu_memset {
	struct trace_rec_hdr hdr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint64_t graph_node;
	uint32_t cupti_corr;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t graph_id;
	uint32_t value;
	uint8_t mem_kind;		/* enum trace_gpu_memkind */
	uint8_t is_async;
	uint16_t _pad;
	uint32_t _pad2;
};
_Static_assert(sizeof(struct trace_rec_gpu_memset) == 72, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_rec_gpu_corr {
	struct trace_rec_hdr hdr;
	uint64_t ext_id;		/* TRACE_CORR_ID of the intercepted call */
	uint32_t cupti_corr;
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_gpu_corr) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_gpu_api_domain {
	TRACE_GPU_API_DRIVER = 1,
	TRACE_GPU_API_RUNTIME = 2,
};

struct trace_rec_gpu_api {
	struct trace_rec_hdr hdr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t cupti_corr;
	uint32_t tid;			/* gettid() of the calling thread */
	uint32_t cbid;			/* CUPTI callback id in its domain */
	uint16_t domain;		/* enum trace_gpu_api_domain */
	uint16_t _pad;
};
_Static_assert(sizeof(struct trace_rec_gpu_api) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/*
 * GPU_KERNEL_RUN and GPU_API_RUN (1.3): COUNT GPU_KERNEL or GPU_API records as columns, so the
 * fields that change from record to record (times, correlation ids) are stored apart from those
 * that repeat and cost a few bytes each instead of 88 and 40. After the struct come the columns,
 * each of COUNT unsigned LEB128 varints (at most 10 bytes, 64 bits), then zero padding to 8.
 * Differences are taken from the previous record of the run (the first: from the struct's
 * base_ns and corr, and 0 for the others), wrap modulo 2^64 (times, graph node) or 2^32
 * (correlation id, thread id), and are zigzag-coded: 2d for d >= 0, -2d-1 for d < 0.
 *
 * GPU_KERNEL_RUN columns, in this order:
 *   shape       which GPU_KERNEL record of the chunk (0: its first) the kernel equals in every
 *               field but those below: device, context, stream, name, geometry, registers,
 *               shared memory. A chunk decodes on its own: the shape is never in another chunk.
 *   start       zigzag difference of start_ns
 *   duration    end_ns - start_ns
 *   corr        zigzag difference of cupti_corr (32 bits)
 *   graph_id    the value (32 bits)
 *   graph_node  zigzag difference of graph_node
 * GPU_API_RUN columns: start, duration, corr (as above), tid (zigzag difference, 32 bits), cbid
 * (the value, 32 bits), domain (the value, 16 bits).
 *
 * Readers hand each record out as the GPU_KERNEL or GPU_API it stands for. The order of GPU
 * records in a chunk carries no meaning (CUPTI delivers them buffer by buffer).
 */
struct trace_rec_gpu_run {
	struct trace_rec_hdr hdr;	/* dt_ns is 0 */
	uint32_t count;			/* records, >= 1 */
	uint32_t corr;			/* the first correlation id's difference is from this */
	uint64_t base_ns;		/* the first start's difference is from this */
	/* uint8_t columns[] */
};
_Static_assert(sizeof(struct trace_rec_gpu_run) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

#define TRACE_GPU_KERNEL_RUN_COLUMNS	6
#define TRACE_GPU_API_RUN_COLUMNS	6

/* GPU_INFO: written when CUPTI starts, on every change of its counters, and at the end. */
struct trace_rec_gpu_info {
	struct trace_rec_hdr hdr;
	uint64_t ts_ns;
	uint64_t nr_records;		/* activity records converted so far */
	uint64_t nr_dropped;		/* cuptiActivityGetNumDroppedRecords, summed */
	uint64_t nr_zero_ts;		/* kernels/copies/sets with start or end 0: not written */
	uint64_t nr_buffers;		/* activity buffers completed */
	uint32_t cupti_version;		/* cuptiGetVersion */
	uint32_t state;			/* enum trace_note_kind: CUPTI_ON or CUPTI_OFF */
};
_Static_assert(sizeof(struct trace_rec_gpu_info) == 56, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/*
 * Hardware counters (1.1). PM_CONFIG says, per device, which CUPTI metric fills each value slot
 * of that device's PM_SAMPLEs; a slot whose name is 0 was not sampled (its values are NaN).
 * Values are percent of the unit's sustained peak over the sample's interval, as CUPTI
 * evaluates them; sample times are in the trace clock (converted from the GPU's %globaltimer).
 * 1.7 grew both records at the tail from 6 slots to 16 (the memory levels and the SM's pipes):
 * a 1.1-1.6 record is TRACE_PM_CONFIG_1_1_BYTES / TRACE_PM_SAMPLE_1_1_BYTES long, and its
 * slots from TRACE_PM_NR_SLOTS_1_1 on read as not sampled.
 */
enum trace_pm_slot {
	TRACE_PM_SM_ACTIVE = 0,		/* SM cycles with at least one warp resident, % */
	TRACE_PM_DRAM = 1,		/* DRAM throughput, % of peak */
	TRACE_PM_TENSOR = 2,		/* tensor pipe active, % */
	TRACE_PM_GR_ACTIVE = 3,		/* graphics/compute engine active, % (nvidia-smi's view) */
	TRACE_PM_SM_THROUGHPUT = 4,	/* SM throughput (speed-of-light triage), % */
	TRACE_PM_L2 = 5,		/* (1.7) L2 sector throughput, % of peak */
	TRACE_PM_ISSUE = 6,		/* (1.7) warp instructions issued, % of peak */
	TRACE_PM_FMA = 7,		/* (1.7) FMA pipe (FP32 arithmetic, IMAD), % */
	TRACE_PM_ALU = 8,		/* (1.7) ALU pipe (integer, logic, compare, convert), % */
	TRACE_PM_XU = 9,		/* (1.7) XU pipe (exp, log, sin, rsqrt: special functions), % */
	TRACE_PM_FP64 = 10,		/* (1.7) FP64 pipe active, % */
	TRACE_PM_LSU = 11,		/* (1.7) L1 load/store wavefronts (global, local, shared), % */
	TRACE_PM_WARPS = 12,		/* (1.7) warps resident, % of the SMs' warp slots */
	TRACE_PM_NR_SLOTS = 16,		/* slots 13-15 are spare */
	TRACE_PM_NR_SLOTS_1_1 = 6,	/* the slots of a 1.1-1.6 record */
};

struct trace_rec_pm_config {
	struct trace_rec_hdr hdr;
	uint32_t device;		/* CUDA ordinal */
	uint32_t chip;			/* STRING id: "GH100" */
	uint64_t interval_ns;		/* requested sampling interval */
	uint32_t metric[TRACE_PM_NR_SLOTS];	/* STRING id of each slot's metric; 0 none */
};
_Static_assert(sizeof(struct trace_rec_pm_config) == 88, "on-disk ABI: bump TRACE_VERSION_MAJOR");
#define TRACE_PM_CONFIG_1_1_BYTES 48

enum trace_pm_sample_flags {
	TRACE_PM_OVERFLOW = 1u << 0,	/* samples were lost before this one (hardware buffer) */
};

struct trace_rec_pm_sample {
	struct trace_rec_hdr hdr;
	uint32_t device;
	uint32_t flags;			/* enum trace_pm_sample_flags */
	uint64_t start_ns;
	uint64_t end_ns;
	float value[TRACE_PM_NR_SLOTS];	/* % per enum trace_pm_slot; NaN: not sampled */
};
_Static_assert(sizeof(struct trace_rec_pm_sample) == 96, "on-disk ABI: bump TRACE_VERSION_MAJOR");
#define TRACE_PM_SAMPLE_1_1_BYTES 56

/* ---- NVTX (1.6): the program's own annotations, through NVTX's injection interface ---- */

/*
 * The shim is an NVTX injection library (NVTX_INJECTION64_PATH): the program's ranges and
 * marks, timed on the hooks' clock like calls, in the thread records of the thread that made
 * them. Names are STRING ids: a message string interned by the shim (at most
 * TRACE_NVTX_MAX_NAME bytes kept, bytes as given: not necessarily UTF-8) or a string the
 * program registered (nvtxDomainRegisterString). Domain 0 is NVTX's default domain; others are
 * named by an NVTX_DOMAIN record before their first use.
 */
#define TRACE_NVTX_MAX_NAME	256

struct trace_rec_nvtx_domain {
	struct trace_rec_hdr hdr;
	uint32_t id;			/* 1, 2, ... */
	uint32_t name;			/* STRING id */
};
_Static_assert(sizeof(struct trace_rec_nvtx_domain) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_nvtx_flags {
	TRACE_NVTX_NAME_CUT = 1u << 0,	/* the message was longer than TRACE_NVTX_MAX_NAME */
	TRACE_NVTX_UNICODE = 1u << 1,	/* the message was wide characters (kept as UTF-8) */
	TRACE_NVTX_NO_NAME = 1u << 2,	/* the shim's string table was full: name is 0 */
};

/* PUSH, START and MARK: hdr.dt_ns -> when the program called NVTX. */
struct trace_rec_nvtx_range {
	struct trace_rec_hdr hdr;
	uint32_t domain;		/* 0: the default domain */
	uint32_t name;			/* STRING id; 0: no message */
	uint32_t category;		/* the program's category; 0 none */
	uint32_t color;			/* ARGB as given; 0 none */
	uint64_t id;			/* START: the range id it returned (END names it); else 0 */
	uint32_t flags;			/* enum trace_nvtx_flags */
	uint32_t reserved;		/* 0 */
};
_Static_assert(sizeof(struct trace_rec_nvtx_range) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* POP: the thread's innermost open range of the domain ends; END: range @id ends. */
struct trace_rec_nvtx_end {
	struct trace_rec_hdr hdr;
	uint64_t id;			/* END: what START returned; POP: the domain */
};
_Static_assert(sizeof(struct trace_rec_nvtx_end) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* ---- Call stacks (1.9) ---- */

/*
 * The shim captures the stack of the calls that cost time and are few: host synchronizations
 * (context, stream, event), blocking copies (the entry points without TRACE_API_ASYNC, and
 * asynchronous ones that held the host 20 us or more: from pageable memory they block),
 * allocations and frees (stream-ordered ones sampled as launches are), module and library loads,
 * the first launch of each kernel, and every Nth launch of a thread (N: GPUSHIM_STACK_SAMPLE).
 *
 * STACK (meta) defines a stack once per trace, before the first CALL_STACK that names it: its
 * native frames, then, in a CPython process whose calling thread held the GIL, its Python
 * frames, each innermost first. Native frames are return addresses (the first is the return
 * address into the code that called the CUDA entry point; the shim's own frames are left out):
 * look an address up at pc - 1, the call instruction. Python frames name their code's file and
 * function (co_qualname from 3.11, co_name before) by STRING ids and the line being executed.
 *
 * PC (meta) says where a native frame's address lies, once per distinct address, before the
 * first STACK that holds it: the module (path and GNU build-id, as STRING ids), the address in
 * the module's own ELF address space (the address less the module's load bias: what
 * `addr2line -e MODULE` takes), and the nearest dynamic symbol below it (dladdr), when the
 * module exports one. An address in no loaded module (JIT code, a library unloaded before the
 * writer looked) has module 0. An address may have no PC record: the shim waits a bounded time
 * for the dynamic loader (its lock can be held for good by a thread ending the process inside
 * dlopen) and asks again only for a later stack that holds the address.
 *
 * CALL_STACK (thread) follows the call record it belongs to in its thread's records, stamped
 * with that call's start time (its dt_ns is 0 after the call): the call is the thread's record
 * with the same start time and entry point (api), and, when seq is nonzero, the same seq - so a
 * launch written as LAUNCH_REPEAT, a run or refs is found as the LAUNCH it stands for. A call
 * whose record was lost has no CALL_STACK; a CALL_STACK whose call is not found is ignored.
 *
 * NOTE STACKS, once at the end, in this form:
 *   "off" (GPUSHIM_STACKS=0), or
 *   "depth D, launches 1 in N; captured C, python P, no GIL G, failed F (not ready R, table
 *    full T, names S, lost L)", then (later shims) "; slow walks W; python without the GIL U"
 * where N 0 means first launches only; C counts CALL_STACKs written, P those with Python
 * frames read (U of them from a thread that had released the GIL: PYTHON_UNLOCKED), G captures in a Python process whose thread did not hold the GIL (their stacks
 * carry TRACE_STACK_NO_GIL and no Python frames), F captures that could not be made and wrote
 * no CALL_STACK: before the shim was ready to unwind (R), the stack table full (T), Python
 * names beyond the shim's budget (S), the record dropped from a full ring (L; also in LOST).
 */
#define TRACE_STACK_MAX_FRAMES	64	/* of each kind in one STACK */

enum trace_stack_flags {
	TRACE_STACK_NATIVE_CUT = 1u << 0,	/* the native stack was deeper than kept */
	TRACE_STACK_PYTHON_CUT = 1u << 1,	/* the Python stack was deeper than kept */
	TRACE_STACK_PYTHON = 1u << 2,		/* Python frames were read (none: no Python code
						 * was running on the thread) */
	TRACE_STACK_NO_GIL = 1u << 3,		/* a CPython process, but the thread did not hold
						 * the GIL: Python frames not read */
	TRACE_STACK_PYTHON_UNLOCKED = 1u << 4,	/* (1.9, later shims) with PYTHON: the thread had
						 * released the GIL (PyTorch's operators do),
						 * its frames read from the interpreter's own
						 * structures (CPython 3.11 - 3.13) */
};

struct trace_rec_stack {
	struct trace_rec_hdr hdr;
	uint32_t id;			/* 1, 2, ... in order of definition; CALL_STACK.stack */
	uint16_t nr_native;		/* <= TRACE_STACK_MAX_FRAMES */
	uint16_t nr_python;		/* <= TRACE_STACK_MAX_FRAMES */
	uint32_t flags;			/* enum trace_stack_flags */
	uint32_t _pad;
	/* uint64_t pc[nr_native]; struct trace_stack_py py[nr_python]; */
};
_Static_assert(sizeof(struct trace_rec_stack) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

struct trace_stack_py {
	uint32_t file;			/* STRING id of co_filename */
	uint32_t func;			/* STRING id of co_qualname (co_name before Python 3.11) */
	int32_t line;			/* the line being executed; -1 unknown */
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_stack_py) == 16, "on-disk ABI: bump TRACE_VERSION_MAJOR");

/* The size of a STACK record with @nat native and @py Python frames. */
#define TRACE_STACK_BYTES(nat, py)                                                                 \
	(sizeof(struct trace_rec_stack) + (size_t)(nat) * sizeof(uint64_t) +                       \
	 (size_t)(py) * sizeof(struct trace_stack_py))

struct trace_rec_pc {
	struct trace_rec_hdr hdr;
	uint64_t pc;			/* as in STACK records */
	uint64_t offset;		/* pc less the module's load bias; 0 when module is 0 */
	uint32_t module;		/* STRING id of the module's path; 0: in no loaded module */
	uint32_t build_id;		/* STRING id of its GNU build-id, lowercase hex; 0: none */
	uint32_t symbol;		/* STRING id of the nearest dynamic symbol below; 0: none */
	uint32_t sym_offset;		/* pc - that symbol's address */
};
_Static_assert(sizeof(struct trace_rec_pc) == 40, "on-disk ABI: bump TRACE_VERSION_MAJOR");

enum trace_call_stack_why {
	TRACE_CALL_STACK_ALWAYS = 0,	/* a kind of call whose every stack is captured */
	TRACE_CALL_STACK_FIRST = 1,	/* the first launch of its kernel in the process */
	TRACE_CALL_STACK_SAMPLED = 2,	/* one in N launches (or stream-ordered allocations) */
	TRACE_CALL_STACK_SLOW = 3,	/* (1.9, from shim 0.2.0's later builds) an asynchronous
					 * copy that held the host 20 us or more: from pageable
					 * memory, it blocks */
};

struct trace_rec_call_stack {
	struct trace_rec_hdr hdr;	/* dt_ns -> the call's start time */
	uint32_t stack;			/* STACK id */
	uint16_t api;			/* the call's API_DEF id */
	uint16_t why;			/* enum trace_call_stack_why */
	uint32_t seq;			/* the call's seq; 0 for calls without one */
	uint32_t _pad;
};
_Static_assert(sizeof(struct trace_rec_call_stack) == 24, "on-disk ABI: bump TRACE_VERSION_MAJOR");

#endif /* GPUSHIM_TRACE_FORMAT_H */
