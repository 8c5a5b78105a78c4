# The whole guest (`make vm`, docs/vm.md): QEMU's system emulator with
# qosim's hooks (qemu/build-qemu), the qosim-vm plugin that holds the model
# inside it, Debian's kernel and the project's initramfs. Included by the
# Makefile; everything lands in build/vm/.

VM := build/vm
# The plugin of the sanitizer build's whole-guest test
# (tests/e2e/test_vm_san.sh) carries the library built with ASan and UBSan
# (SANITIZE): QEMU has no sanitizer runtime of its own, so that test
# preloads it into QEMU; the normal plugin is never sanitized.

# vm_plugin LIB PLUGIN FLAGS: the plugin is a shared object carrying the
# library of the normal or the sanitizer build (LIB; every object is
# position-independent), built against the patched tree's headers (the
# plugin API and the hooks).
define vm_plugin
$(2): qemu/plugin/qosim-vm.c qemu/plugin/simctl.h $(1) $$(VM)/qemu-system-x86_64
	@mkdir -p $$(dir $$@)
	$$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $$(CFLAGS) $(3) -fPIC -shared \
	  -fvisibility=hidden -Wl,--exclude-libs,ALL -I$$(VM)/qemu-src/include/qemu -Iinclude -Isrc \
	  -o $$@ qemu/plugin/qosim-vm.c $(1) $$(LDLIBS)
endef
$(eval $(call vm_plugin,$(BUILD)/libqosim.a,$(VM)/qosim-vm.so,))
$(eval $(call vm_plugin,$(BUILD)/san/libqosim.a,$(VM)/san/qosim-vm.so,$(SANITIZE)))

# The library of the other build than this make's own comes from a make of
# that build (which knows its objects' dependencies); the plugin is linked
# again only when that changed it.
.PHONY: FORCE
ifeq ($(SAN),1)
$(BUILD)/libqosim.a: FORCE
	$(MAKE) SAN=0 $@
else
$(BUILD)/san/libqosim.a: FORCE
	$(MAKE) SAN=1 $@
endif

$(VM)/qemu-system-x86_64: qemu/build-qemu qemu/qemu-cc qemu/devices.mak qemu/patches/series $(wildcard qemu/patches/*.patch)
	qemu/build-qemu $(VM)
	@touch $@

$(VM)/kernel/vmlinux: qemu/guest/fetch-kernel
	qemu/guest/fetch-kernel $(VM)/kernel
	@touch $@

# bookworm-backports' kernel (6.12), for what only a newer resctrl programs
# (AMD's BMEC and SMBA, tests/e2e/test_vm_amd_bmec.sh); booted with --kernel
# and the same initramfs.
$(VM)/kernel-bp/vmlinux: qemu/guest/fetch-kernel
	qemu/guest/fetch-kernel $(VM)/kernel-bp bookworm-backports
	@touch $@

$(VM)/qosim-guest: qemu/guest/qosim-guest.c qemu/plugin/simctl.h
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o $@ $<

# The modules of both kernels: the same initramfs boots either.
$(VM)/initramfs.cpio.gz: qemu/guest/mkinitramfs qemu/guest/init $(VM)/qosim-guest \
                         $(VM)/kernel/vmlinux $(VM)/kernel-bp/vmlinux \
                         $(wildcard tests/vm/* qemu/guest/rootfs/*/*)
	qemu/guest/mkinitramfs $@ $(VM)/kernel:$(VM)/kernel-bp $(VM)/qosim-guest tests/vm

.PHONY: vm vm-san
vm: $(O)/qosim $(VM)/qemu-system-x86_64 $(VM)/qosim-vm.so $(VM)/initramfs.cpio.gz \
    $(VM)/kernel-bp/vmlinux
vm-san: vm $(VM)/san/qosim-vm.so
