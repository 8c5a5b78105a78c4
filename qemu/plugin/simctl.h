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

#endif
