"""Tests of tools/count_plugin_lines.py: what counts as a line of code."""

import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import count_plugin_lines as counter  # noqa: E402

SCRIPT = str(REPO / "tools" / "count_plugin_lines.py")


def test_blank_and_comment_lines_do_not_count():
    text = "\n".join([
        "// a comment",
        "",
        "   ",
        "/* a block",
        "   comment */",
        "int a = 1;  // code with a comment",
        "/* before */ int b;",
        "int c; /* starts",
        "ends */",
        "const char* s = \"// not a comment\";",
        "const char* t = \"/* nor this\";",
        "char q = '\"';",
        "int d;",
    ])
    assert counter.code_lines(text) == 7


def test_escaped_quote_stays_in_the_string():
    assert counter.code_lines('f("a\\" // b");\n// c\n') == 1


def test_comment_stripping_keeps_code():
    assert counter.strip_comments("x /* y */ z // w") == ["x   z "]


def test_every_case_study_is_listed_with_the_published_count():
    rows = {name: (lines, published) for name, _, lines, published in counter.table(str(REPO))}
    assert rows["B+-tree scan"][1] == 103 and rows["du (directory walk)"][1] == 199
    assert rows["B+-tree scan"][0] is not None and rows["B+-tree scan"][0] > 0


def test_command_line(tmp_path):
    source = tmp_path / "x.cc"
    source.write_text("// c\nint x;\n\nint y;\n")
    result = subprocess.run([sys.executable, SCRIPT, str(source)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.split()[0] == "2"
    table = subprocess.run([sys.executable, SCRIPT, "--markdown"], capture_output=True, text=True)
    assert table.stdout.startswith("| Plugin | Files | Lines | Published system |")
    missing = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "none.cc")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_host_check_finds_code_that_refers_to_foreactor(tmp_path):
    (tmp_path / "examples" / "random_read").mkdir(parents=True)
    (tmp_path / "examples" / "random_read" / "random_read.c").write_text(
        "/* foreactor in a comment is fine */\n#include \"foreactor/foreactor.h\"\n")
    problems = counter.check_hosts(str(tmp_path))
    assert problems == ["examples/random_read/random_read.c refers to foreactor in its code"]
