# The devices qemu-system-x86_64 is built with (qemu/build-qemu passes it
# to QEMU's configure as --with-devices-x86_64, with
# --without-default-devices): the i440FX PC board that `qosim vm` runs
# (-M pc) and what that board instantiates by default. Kconfig adds what
# the board selects (PIIX3, IDE, ACPI, RTC, PIT, PIC, the ISA serial ports,
# fw_cfg); the four below are devices QEMU's default build implies and the
# board creates without being asked (the HPET, the parallel port, VMware's
# I/O port and mouse), so the guest sees the same machine as with QEMU's
# full device set. Everything else (other boards, PCI cards, USB, VGA) is
# not compiled: `qosim vm` asks for none of it (-vga none -nic none), and
# ninja has 1,212 steps to run rather than 1,430.
CONFIG_I440FX=y
CONFIG_HPET=y
CONFIG_PARALLEL=y
CONFIG_VMPORT=y
CONFIG_VMMOUSE=y
