/* A program whose every instruction and access is known, for the QEMU
 * engine's exact-record test (tests/e2e/test_live.sh): no libc, no
 * loader, so the trace holds exactly these instructions. Built with
 * cc -nostdlib -static -no-pie. */
        .globl _start
        .text
_start:
        lea     buf(%rip), %rdi
        mov     $3, %ecx
1:      mov     %rcx, (%rdi)            /* S 8 */
        add     $8, %rdi
        addl    $1, counter(%rip)       /* M 4: a load and a store of one address */
        dec     %ecx
        jnz     1b                      /* cond: taken, taken, not taken */
        call    f                       /* call */
        jmp     2f                      /* jmp, always taken */
        nop                             /* never runs */
2:      lea     buf(%rip), %rsi
        lea     dst(%rip), %rdi
        mov     $4, %ecx
        rep movsb                       /* four iterations: L 1, S 1 each */
        lea     tab(%rip), %rax
        call    *(%rax)                 /* call-ind: L 8, S 8 (the return address) */
        mov     $60, %eax
        xor     %edi, %edi
        syscall                         /* exit(0) */
f:      push    %rbx                    /* S 8 */
        pop     %rbx                    /* L 8 */
        ret                             /* ret: L 8 */
g:      ret
        .data
tab:    .quad   g
        .bss
buf:    .space  64
dst:    .space  64
counter:.space  4
