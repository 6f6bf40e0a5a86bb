// high_descriptors.h: where foreactor keeps descriptors of its own, out of
// the program's way.
//
// A program's open takes the lowest free descriptor number, so foreactor's
// own descriptors (an io_uring ring, a file reopened for reads of its own)
// are kept at high numbers: the program gets
// the numbers it would get without foreactor as long as it holds fewer
// descriptors than the range below them.  The range's top is the descriptor
// limit (RLIMIT_NOFILE), capped at kHighDescriptorCap.
//
// The kernel grows a process's descriptor table to cover the highest
// number in use.  In a process with more than one thread, growing it waits
// for an RCU grace period (milliseconds); with one thread it takes tens of
// microseconds.  ReserveHighDescriptors() grows it
// once, at library load, so that foreactor's first high descriptor later
// costs nothing.  The cap bounds what the table costs the kernel (512 KiB of
// pointers at 65,536 entries) under a limit of a million or more.
#ifndef FOREACTOR_ENGINE_HIGH_DESCRIPTORS_H_
#define FOREACTOR_ENGINE_HIGH_DESCRIPTORS_H_

namespace foreactor {

inline constexpr long kHighDescriptorCap = 65536;

// The top of the range foreactor's descriptors use: min(soft
// RLIMIT_NOFILE, kHighDescriptorCap).  -1 when the limit cannot be read.
long HighDescriptorCeiling();

// The lowest number of the high range under the top `ceiling`
// (HighDescriptorCeiling()): far above the numbers a program uses, 1,024
// below the top, or half of it when the top is under 2,048.  -1 when the
// top leaves no such room (under 256, or -1).
long HighDescriptorFloor(long ceiling);

// Grows the calling process's descriptor table to HighDescriptorCeiling()
// entries now, by taking and releasing the number just below it.  Meant for
// the library's load, while the process has one thread.  Changes nothing
// the program can observe besides the table's size; does nothing when the
// limit cannot be read or that number is taken.
void ReserveHighDescriptors();

}  // namespace foreactor

#endif  // FOREACTOR_ENGINE_HIGH_DESCRIPTORS_H_
