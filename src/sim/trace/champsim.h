/* ChampSim's trace record (its inc/trace_instruction.h, input_instr), what
 * its reader (trace_champsim.c) and writer (twrite_champsim.c) share: 64
 * bytes, little-endian, zero marking an unused slot. */
#ifndef QOSIM_SIM_CHAMPSIM_H
#define QOSIM_SIM_CHAMPSIM_H

enum {
    CHAMPSIM_REC = 64,
    CHAMPSIM_IP = 0,        /* u64 */
    CHAMPSIM_IS_BRANCH = 8, /* u8 */
    CHAMPSIM_TAKEN = 9,     /* u8 */
    CHAMPSIM_DST_REG = 10,  /* u8[2] */
    CHAMPSIM_SRC_REG = 12,  /* u8[4] */
    CHAMPSIM_DST_MEM = 16,  /* u64[2]: stores */
    CHAMPSIM_SRC_MEM = 32,  /* u64[4]: loads */
};
#define CHAMPSIM_NDST 2
#define CHAMPSIM_NSRC 4

/* The register numbers ChampSim's branch rule looks at (its champsim.h). */
enum { CHAMPSIM_REG_SP = 6, CHAMPSIM_REG_FLAGS = 25, CHAMPSIM_REG_IP = 26 };

#endif
