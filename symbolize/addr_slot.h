/* Internal to symbolize/: where a code address goes in a direct-mapped memo. */
#ifndef CSTRACE_SYMBOLIZE_ADDR_SLOT_H
#define CSTRACE_SYMBOLIZE_ADDR_SLOT_H

#include <stddef.h>
#include <stdint.h>

/* The slot of @addr among 1 << @bits (1 to 63): Fibonacci hashing, whose top
 * bits mix every bit of the address. Code addresses are aligned and cluster: an
 * index made of their low bits (shifted and xored) put neighbouring branches on
 * one slot, and a bigger memo missed as often. */
static inline size_t sym_addr_slot(uint64_t addr, unsigned bits)
{
	return (size_t)(addr * 0x9e3779b97f4a7c15ull >> (64 - bits));
}

#endif
