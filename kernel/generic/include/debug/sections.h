/** @file sections.h
 * The kernel image's bounds, as the linker script (each architecture's
 * _link.ld) and the boot assembly define them: declared once here for
 * every C file that reads them (only their addresses are meaningful).
 */
#ifndef KERN_DEBUG_SECTIONS_H_
#define KERN_DEBUG_SECTIONS_H_

/** The start of the kernel's text, the image's first byte (_link.ld). */
extern const char ktext_start[];
/** The end of the kernel's text (_link.ld). */
extern const char ktext_end[];
/** The end of the kernel image, .bss included (_link.ld). */
extern const char kernel_end[];
/** The top of the boot CPU's stack (the boot assembly: amd64's
 * boot/multiboot.S, arm64's start.S). */
extern char boot_stack_top[];

#endif
