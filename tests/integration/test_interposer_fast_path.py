"""Every interposer's idle path (no speculating scope on the thread) ends in
a tail call to the libc function: no stack frame, no call, no return of its
own (src/intercept/interpose.h says why: a return after a system call is
mispredicted, 20 ns a call on the development VM).

Read from the built library's machine code: starting at the exported symbol,
the path that falls through every conditional branch (the fast-path test,
the fortified functions' size check) and follows direct jumps must reach an
indirect jmp before any push, stack adjustment, call or ret."""
import os
import re
import subprocess

import pytest

from conftest import build_dir, library

# The variadic opens read their mode with va_arg, which needs the register
# save area of a stack frame; they are the exceptions.
VARIADIC = {"open", "open64", "openat", "openat64"}

INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")


def interposed_names():
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library())],
                             check=True, capture_output=True, text=True).stdout
    names = [line.split()[-1] for line in listing.splitlines() if line.strip()]
    return sorted(name for name in names if not name.startswith("foreactor_"))


def disassembly():
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library())],
                          check=True, capture_output=True, text=True).stdout
    instructions = {}   # address -> (mnemonic, operands)
    symbols = {}        # name -> address
    for line in text.splitlines():
        symbol = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if symbol:
            symbols.setdefault(symbol.group(2), int(symbol.group(1), 16))
            continue
        instruction = INSTRUCTION.match(line)
        if instruction:
            instructions[int(instruction.group(1), 16)] = (instruction.group(2),
                                                           instruction.group(3))
    return instructions, symbols


def idle_path(instructions, start):
    """The instructions of the fall-through path from `start`, up to and
    including the first one that ends it."""
    addresses = sorted(instructions)
    following = {address: addresses[i + 1] for i, address in enumerate(addresses[:-1])}
    path = []
    address = start
    while len(path) < 64:
        mnemonic, operands = instructions[address]
        path.append(f"{mnemonic} {operands}".strip())
        if mnemonic in ("call", "ret", "push") or (mnemonic == "sub" and "%rsp" in operands):
            return path
        if mnemonic == "jmp":
            if operands.startswith("*"):
                return path
            address = int(operands.split()[0], 16)
            continue
        address = following[address]
    return path


@pytest.mark.skipif(bool(os.environ.get("FOREACTOR_SANITIZED")),
                    reason="sanitizers instrument every function")
def test_idle_path_of_every_interposer_is_a_tail_call():
    cache = build_dir() / "CMakeCache.txt"
    if cache.exists() and "CMAKE_BUILD_TYPE:STRING=Debug" in cache.read_text():
        pytest.skip("an unoptimized build makes no tail calls")
    instructions, symbols = disassembly()
    checked = 0
    for name in interposed_names():
        if name in VARIADIC:
            continue
        path = idle_path(instructions, symbols[name])
        assert path[-1].startswith("jmp *"), (name, path)
        checked += 1
    assert checked >= 30
