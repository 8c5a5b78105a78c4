# The whole guest (`make vm`, docs/vm.md): QEMU's system emulator with
# qosim's hooks (qemu/build-qemu), the qosim-vm plugin that holds the model
# inside it, Debian's kernel and the project's initramfs. Included by the
# Makefile; everything lands in build/vm/.

VM := build/vm
# ASan and UBSan, for the plugin of the sanitizer build's whole-guest test
# (tests/e2e/test_vm_san.sh): QEMU has no sanitizer runtime of its own, so
# that test preloads it into QEMU; the normal plugin is never sanitized.
VM_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# vm_plugin LIBDIR PLUGIN FLAGS: the plugin is a shared object, so the
# library it carries is compiled once more, position-independent, into
# LIBDIR with FLAGS; the plugin is built against the patched tree's headers
# (the plugin API and the hooks).
define vm_plugin
$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(filter-out $$(SANFLAGS),$$(ALLCFLAGS)) $(3) -fPIC -c $$< -o $$@

$(1)/gen/profiles.o: build/gen/profiles.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(filter-out $$(SANFLAGS),$$(ALLCFLAGS)) $(3) -fPIC -c $$< -o $$@

$(1)/libqosim.a: $$(LIB_SRC:%.c=$(1)/%.o) $(1)/gen/profiles.o
	rm -f $$@
	ar rcs $$@ $$^

$(2): qemu/plugin/qosim-vm.c $(1)/libqosim.a $$(VM)/qemu-system-x86_64
	@mkdir -p $$(dir $$@)
	$$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $$(CFLAGS) $(3) -fPIC -shared \
	  -fvisibility=hidden -Wl,--exclude-libs,ALL -I$$(VM)/qemu-src/include/qemu -Iinclude -Isrc \
	  -o $$@ qemu/plugin/qosim-vm.c $(1)/libqosim.a $$(LDLIBS)
endef
$(eval $(call vm_plugin,build/pic,$(VM)/qosim-vm.so,))
$(eval $(call vm_plugin,build/pic-san,$(VM)/san/qosim-vm.so,$(VM_SANFLAGS)))

$(VM)/qemu-system-x86_64: qemu/build-qemu qemu/devices.mak qemu/patches/series $(wildcard qemu/patches/*.patch)
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

$(VM)/qosim-guest: qemu/guest/qosim-guest.c
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
