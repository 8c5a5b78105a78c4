# The whole guest (`make vm`, docs/vm.md): QEMU's system emulator with
# qosim's hooks (qemu/build-qemu), the qosim-vm plugin that holds the model
# inside it, Debian's kernel and the project's initramfs. Included by the
# Makefile; everything lands in build/vm/.

VM := build/vm

# The plugin is a shared object, so the library it carries is compiled
# once more, position-independent (never sanitized: QEMU has no sanitizer
# runtime to give it).
PIC_OBJ := $(LIB_SRC:%.c=build/pic/%.o) build/pic/gen/profiles.o

build/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(ALLCFLAGS)) -fPIC -c $< -o $@

build/pic/gen/profiles.o: build/gen/profiles.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(ALLCFLAGS)) -fPIC -c $< -o $@

build/pic/libqosim.a: $(PIC_OBJ)
	rm -f $@
	ar rcs $@ $^

$(VM)/qemu-system-x86_64: qemu/build-qemu qemu/patches/series $(wildcard qemu/patches/*.patch)
	qemu/build-qemu $(VM)
	@touch $@

# Built against the patched tree's headers: the plugin API and the hooks.
$(VM)/qosim-vm.so: qemu/plugin/qosim-vm.c build/pic/libqosim.a $(VM)/qemu-system-x86_64
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) -fPIC -shared \
	  -fvisibility=hidden -Wl,--exclude-libs,ALL -I$(VM)/qemu-src/include/qemu -Iinclude -Isrc \
	  -o $@ qemu/plugin/qosim-vm.c build/pic/libqosim.a $(LDLIBS)

$(VM)/kernel/vmlinux: qemu/guest/fetch-kernel
	qemu/guest/fetch-kernel $(VM)/kernel
	@touch $@

$(VM)/qosim-guest: qemu/guest/qosim-guest.c
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o $@ $<

$(VM)/initramfs.cpio.gz: qemu/guest/mkinitramfs qemu/guest/init $(VM)/qosim-guest \
                         $(VM)/kernel/vmlinux $(wildcard tests/vm/* qemu/guest/rootfs/*/*)
	qemu/guest/mkinitramfs $@ $(VM)/kernel $(VM)/qosim-guest tests/vm

.PHONY: vm
vm: $(O)/qosim $(VM)/qemu-system-x86_64 $(VM)/qosim-vm.so $(VM)/initramfs.cpio.gz

# The plugin once more under ASan and UBSan, for the sanitizer build's
# whole-guest test (tests/e2e/test_vm_san.sh): QEMU has no sanitizer
# runtime of its own, so that test preloads it into QEMU.
VM_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
PICSAN_OBJ := $(LIB_SRC:%.c=build/pic-san/%.o) build/pic-san/gen/profiles.o

build/pic-san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(ALLCFLAGS)) $(VM_SANFLAGS) -fPIC -c $< -o $@

build/pic-san/gen/profiles.o: build/gen/profiles.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(ALLCFLAGS)) $(VM_SANFLAGS) -fPIC -c $< -o $@

build/pic-san/libqosim.a: $(PICSAN_OBJ)
	rm -f $@
	ar rcs $@ $^

$(VM)/san/qosim-vm.so: qemu/plugin/qosim-vm.c build/pic-san/libqosim.a $(VM)/qemu-system-x86_64
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) $(VM_SANFLAGS) -fPIC -shared \
	  -fvisibility=hidden -I$(VM)/qemu-src/include/qemu -Iinclude -Isrc \
	  -o $@ qemu/plugin/qosim-vm.c build/pic-san/libqosim.a $(LDLIBS)

.PHONY: vm-san
vm-san: vm $(VM)/san/qosim-vm.so
