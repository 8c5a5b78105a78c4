/* QOSIM_SIM_CTL: the guest's switch for the model's caches and memory
 * under `qosim vm` (docs/vm.md, "Region of interest"), shared by the plugin
 * and qosim-guest. Not a register of any part (project choice): an MSR in
 * the range Intel reserves for software, 4000_0000H-4000_00FFH, where no
 * processor will implement a feature (SDM Vol. 4, Chapter 2, the opening
 * of its MSR tables; hypervisors put theirs there). The plugin answers it
 * on every profile, AMD ones too.
 *   bit 0, SIM: 1 while the caches and memory simulate the guest's
 *     accesses, 0 while they are skipped (CPUID and the QoS MSRs stay the
 *     model's either way). One switch for all vCPUs; it reads back what
 *     was last written, or 1 once simulation has started by itself.
 *   bits 63:1: reserved; a write that sets any is #GP. */
#ifndef QOSIM_SIMCTL_H
#define QOSIM_SIMCTL_H

#define QOSIM_SIM_CTL     0x400000F0u
#define QOSIM_SIM_CTL_SIM 1ull

/* QOSIM_EVENT_n, n = 2 * event + os: the model's own count of an event on
 * the vCPU that reads it, since the guest started, at CPL 0 (os = 1) or
 * above (os = 0): the ground truth its performance counters count from
 * (docs/vm.md, "Measuring in the guest"), so a guest test can compare
 * perf with the model over the same stretch. Read-only (a write is #GP),
 * in the same software range, on every profile; events as the PMU numbers
 * them (hw/x86_pmu.h, enum x86_pmu_ev): 0 instructions, 1 core cycles,
 * 2 L3 references, 3 L3 misses, 4 branches, 5 branch mispredicts, 6 L1D
 * misses, 7 L2 references, 8 L2 misses, 9 loads, 10 stores, and loads that
 * missed L1D served by 11 L2, 12 L3, 13 the CPU's own node's memory, 14
 * another node's. */
#define QOSIM_EVENT_0 0x400000C0u
#define QOSIM_EVENTS  15u

#endif
