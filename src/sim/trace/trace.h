/* Trace readers: one ops table per format, registered in trace.c.
 *
 * Every reader streams: it turns its input into batches of access records,
 * so memory use does not grow with the trace. Errors name the file and the
 * line (text), record (ChampSim) or byte (qtr) and what is wrong. */
#ifndef QOSIM_SIM_TRACE_H
#define QOSIM_SIM_TRACE_H

#include "bsrc.h"
#include "sim/cache/hier.h"

#include <stdint.h>

/* Record kinds are the hierarchy's access kinds. */
enum { TREC_I = HIER_IFETCH, TREC_L = HIER_LOAD, TREC_S = HIER_STORE, TREC_M = HIER_MODIFY };
/* Branch information on instruction records of formats that carry it.
 * TREC_F_DIRECT marks an unconditional direct (RIP-relative) jump, whose
 * target the front end knows at decode: always taken, never mispredicted
 * (LWP proposal 4.2, and its NDB filter, 5.4). */
enum { TREC_F_BRANCH = 1, TREC_F_TAKEN = 2, TREC_F_DIRECT = 8 };
/* What kind of branch, in bits 4-6 of a branch's flags, where the source
 * knows it (a decoder that saw the instruction's bytes, ChampSim's register
 * rule); 0 where it does not (a Lackey trace's inferred branches). A
 * TREC_BR_JMP also carries TREC_F_DIRECT. ChampSim's writer turns the kind
 * back into the registers its rule reads. */
enum {
    TREC_BR_OTHER = 0,    /* a branch of no kind below, or of unknown kind */
    TREC_BR_COND = 1,     /* conditional (Jcc, LOOP, JrCXZ) */
    TREC_BR_JMP = 2,      /* unconditional direct jump */
    TREC_BR_JMP_IND = 3,  /* indirect jump */
    TREC_BR_CALL = 4,     /* direct call */
    TREC_BR_CALL_IND = 5, /* indirect call */
    TREC_BR_RET = 6,      /* return */
};
#define TREC_BR_SHIFT   4
#define TREC_BR_MASK    0x70
#define TREC_BR(flags)  (((flags)&TREC_BR_MASK) >> TREC_BR_SHIFT)
#define TREC_F_BR(kind) ((uint8_t)((kind) << TREC_BR_SHIFT))

struct trace_rec {
    uint64_t addr;
    uint32_t size;
    uint8_t kind;
    uint8_t flags;
    uint16_t pad;
};

/* A reader may need this many records of room to make progress. */
#define TRACE_MIN_BATCH 8

struct trace;

struct trace_ops {
    const char *name;
    const char *desc;
    const char *unit; /* how messages name a position: "" (a line number) or "record " */
    /* Fills up to n (>= TRACE_MIN_BATCH) records; returns the count, 0 at the
     * end, or a negative code with t->err set. */
    long (*read)(struct trace *t, struct trace_rec *r, size_t n);
};

struct trace {
    const struct trace_ops *ops;
    struct bsrc src;
    char name[256];     /* the path, as the user gave it */
    uint64_t line;      /* text: lines consumed; binary: records consumed */
    int skip_bad;       /* count malformed records instead of stopping */
    uint64_t bad;       /* malformed records skipped */
    uint64_t bad_first; /* line of the first one */
    struct err err;
    /* Text readers' buffer: [pos, lim) holds whole lines not yet parsed. */
    char *buf;
    size_t cap, pos, lim, len;
    int eof;
    /* Text: the input's size when all of it came in the buffer's first
     * read and still lies there, ending in a newline; 0 otherwise. */
    size_t whole;
    size_t first; /* bytes read so far, while they lie from the buffer's start */
    int split;    /* a read landed elsewhere: first no longer holds */
    void *priv;   /* a reader's own state; freed by trace_close and trace_reopen */
};

const struct trace_ops *trace_find(const char *name);
const struct trace_ops *trace_at(unsigned n);
/* The format a file name suggests when none is given. */
const char *trace_guess(const char *path);

int trace_open(struct trace *t, const char *path, const struct trace_ops *ops, int skip_bad,
               struct err *e);
/* The same trace again from its start, for a looping workload, which may
 * loop millions of times a run: a text trace that fitted in the buffer at
 * once is parsed again from memory, without a system call; any other is
 * opened anew, keeping its buffer. On failure t is still closable. */
int trace_reopen(struct trace *t, const char *path, struct err *e);
long trace_read(struct trace *t, struct trace_rec *r, size_t n);
void trace_close(struct trace *t);

/* For readers. */
/* Makes [pos, lim) hold at least one whole line (the last line of the input
 * gets a newline if it lacks one); returns 1, 0 at the end, or an error. */
int trace_text_more(struct trace *t);
/* Reports a malformed record at the current line/record: returns 0 when it
 * is to be skipped, else the error code. */
int trace_bad(struct trace *t, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Quotes up to the end of line for a message, escaping what is not printable. */
void trace_quote(char *out, size_t cap, const char *s, const char *end);

extern const struct trace_ops trace_lackey, trace_champsim, trace_din, trace_qtr;

#endif
