/* The test program itself as the binary a unit test symbolizes: it has symbols
 * and DWARF, and its functions' addresses are at hand. */
#ifndef CSTRACE_TESTS_SELF_ELF_H
#define CSTRACE_TESTS_SELF_ELF_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* dl_iterate_phdr: the load bias of the first object, the program. */
static int self_elf_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	*(uint64_t *)ctx = info->dlpi_addr;
	return 1;
}

/* This program's path into @path (@size bytes), and in *@bias what turns its
 * functions' runtime addresses into the ELF's. False: /proc/self/exe unread. */
static inline bool self_elf(char *path, size_t size, uint64_t *bias)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);

	if (n <= 0)
		return false;
	path[n] = '\0';
	*bias = 0;
	dl_iterate_phdr(self_elf_bias, bias);
	return true;
}

#endif
