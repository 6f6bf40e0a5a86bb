"""The B+-tree tool with its plugins keeps the plain tool's code layout:
every function of the tool and of the tree lies at the same distance from
main in both (tools/compare_code_layout.py; apps/bptree/plugins/CMakeLists.txt
links the plugins after the tree), so that comparing the two where nothing
is issued early measures foreactor, not where the code landed."""

import subprocess
import sys

import pytest

from bptree_test_support import FOREACTOR_TOOL, NOT_BUILT, PLAIN_TOOL, REPO, TOOLS_BUILT


@pytest.mark.skipif(not TOOLS_BUILT, reason=NOT_BUILT)
def test_foreactor_tool_keeps_the_plain_tools_code_layout():
    completed = subprocess.run([sys.executable, str(REPO / "tools" / "compare_code_layout.py"),
                                str(PLAIN_TOOL), str(FOREACTOR_TOOL)],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert int(completed.stdout.split()[0]) > 50, completed.stdout
