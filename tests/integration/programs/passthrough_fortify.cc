// passthrough_fortify: passthrough.cc built with -D_FORTIFY_SOURCE=2 -O2
// (options set in tests/CMakeLists.txt), so that its calls go through the
// fortified entry points (__open_2, __read_chk, __pread_chk, ...).
#include "passthrough.cc"
