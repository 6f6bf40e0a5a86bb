"""libforeactor.so's interface is C: it exports the foreactor_* API and the
libc names it interposes, and no C++ symbol (src/exported_symbols.map).
Built without sanitizers it carries its own hidden C++ runtime, so that a C
program that loads it loads no C++ library."""
import os
import subprocess

import pytest

from conftest import build_dir, library


def dynamic_symbols():
    listing = subprocess.run(["nm", "-D", "--defined-only", str(library())],
                             check=True, capture_output=True, text=True).stdout
    return [line.split()[-1] for line in listing.splitlines() if line.strip()]


def needed_libraries():
    dynamic = subprocess.run(["readelf", "-d", str(library())],
                             check=True, capture_output=True, text=True).stdout
    return [line.split("[")[1].split("]")[0] for line in dynamic.splitlines() if "(NEEDED)" in line]


def test_exports_no_cplusplus_symbol():
    mangled = [name for name in dynamic_symbols() if name.startswith("_Z")]
    assert mangled == []


def test_exports_the_c_api_and_the_interposed_libc_names():
    names = set(dynamic_symbols())
    for expected in ("foreactor_scope_enter", "foreactor_scope_exit", "foreactor_scope_gate",
                     "foreactor_scope_gate_units",
                     "foreactor_enabled", "pread", "read", "write", "fstatat", "openat", "close"):
        assert expected in names, expected


@pytest.mark.skipif(bool(os.environ.get("FOREACTOR_SANITIZED")),
                    reason="sanitizer builds use the shared C++ runtime")
def test_needs_no_cplusplus_library():
    cache = (build_dir() / "CMakeCache.txt").read_text()
    if "FOREACTOR_PRIVATE_CXX_RUNTIME:BOOL=OFF" in cache:
        pytest.skip("built with FOREACTOR_PRIVATE_CXX_RUNTIME=OFF")
    needed = needed_libraries()
    for library in ("libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"):
        assert library not in needed, needed
