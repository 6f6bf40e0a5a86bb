"""Invalid settings: reported once on stderr, treated as off, and the program
still gives exactly the output it gives without foreactor."""
import pytest

from conftest import environment, fresh_directory, program, run

CASES = ["pread_random", "read_sequential", "fstatat_matrix"]


@pytest.fixture(scope="module")
def places(fixture_tree, tmp_path_factory):
    return fixture_tree, tmp_path_factory.mktemp("settings") / "scratch"


def run_cases(places, env):
    fixture, scratch = places
    fresh_directory(scratch)
    return run([program("call_matrix"), fixture, scratch, *CASES], env)


@pytest.fixture(scope="module")
def reference(places):
    outcome = run_cases(places, environment())
    assert outcome.returncode == 0, outcome
    return outcome


@pytest.mark.parametrize("variables,message", [
    ({"FOREACTOR": "yes"}, "FOREACTOR"),
    ({"FOREACTOR": "1", "FOREACTOR_DEPTH": "abc"}, "FOREACTOR_DEPTH"),
    ({"FOREACTOR": "1", "FOREACTOR_DEPTH": "99999"}, "FOREACTOR_DEPTH"),
    ({"FOREACTOR": "1", "FOREACTOR_ENGINE": "uring"}, "FOREACTOR_ENGINE"),
    ({"FOREACTOR": "1", "FOREACTOR_QUEUE_SIZE": "-4"}, "FOREACTOR_QUEUE_SIZE"),
    ({"FOREACTOR": "1", "FOREACTOR_PAGE_CACHE": "2"}, "FOREACTOR_PAGE_CACHE"),
    ({"FOREACTOR": "1", "FOREACTOR_DEPTH_matrix_pread_random": "x"},
     "FOREACTOR_DEPTH_matrix_pread_random"),
])
def test_invalid_setting_is_reported_once_and_changes_nothing(places, reference, variables,
                                                              message):
    outcome = run_cases(places, environment(**variables))
    assert outcome.returncode == reference.returncode
    assert outcome.stdout == reference.stdout
    stderr = outcome.stderr.decode(errors="replace")
    problem_lines = [line for line in stderr.splitlines()
                     if line.startswith("foreactor: ") and message in line]
    assert len(problem_lines) == 1, stderr
    assert "off" in problem_lines[0], problem_lines[0]
