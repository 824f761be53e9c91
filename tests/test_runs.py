"""A check judges only code the learner ran: the run log, the saved notebook read against a run,
the feedback without a verdict, and the message of a new kernel."""

import json
import os
import re
import time

import numpy as np
import pytest

from engine.core import restart, saved
from engine.core.progress import Progress
from engine.core.registry import get_exercise
from engine.core.runs import RunLog, defines, describe_error
from engine.core.which_run import Unjudged, ago, judge
from test_exercises import run_in_ipython


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


RMS = get_exercise("rms-norm")
UNCLOSED = RMS.solution_source.replace("np.sqrt(", "np.sqrt((", 1) + "\nprint('done')\n"
LINE = next(i for i, line in enumerate(UNCLOSED.splitlines(), 1) if "np.sqrt((" in line)   # never closed


def line_of(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def run(log, namespace, source, cell_id=None, count=None):
    """Run ``source`` in ``namespace`` as a kernel would, telling the log; the error or None."""
    log.started(source, cell_id, namespace)
    try:
        code = compile(source, "<cell>", "exec")
    except SyntaxError as error:
        log.finished(count, error)
        return error
    try:
        exec(code, namespace)
    except Exception as error:  # noqa: BLE001 - the cell's own error, as a kernel reports it
        log.finished(count, error)
        return error
    log.finished(count, None)
    return None


def fresh():
    namespace = {"__name__": "__main__"}
    exec("import numpy as np\nfrom engine.core.blank import ____", namespace)
    return RunLog(["rms_norm", "n_params"]), namespace


# ---------------------------------------------------------------- the run log

def test_defining_lines_are_read_as_text():
    assert defines("def rms_norm(x, gain, eps=1e-5):\n    return (", "rms_norm")
    assert defines("  def rms_norm (x):", "rms_norm") and defines("n_params: int = 3", "n_params")
    assert not defines("y = rms_norm(x, g)", "rms_norm") and not defines("n_params == 3", "n_params")
    assert not defines("def rms_norm_2(x):", "rms_norm") and not defines("my_n_params = 1", "n_params")


def test_an_error_is_described_with_its_line_in_the_cell():
    log, namespace = fresh()
    assert describe_error(run(log, namespace, UNCLOSED)).startswith(f"SyntaxError on line {LINE}: ")
    error = run(log, namespace, "x = 1\nundefined_name + 1\n")
    assert describe_error(error) == "NameError on line 2: name 'undefined_name' is not defined"


def test_a_cell_that_stops_before_its_def_leaves_the_older_function_recorded():
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, count=5)
    passing = namespace["rms_norm"]
    assert log.latest("rms_norm").defined and log.latest("rms_norm").label == "[5]"
    run(log, namespace, UNCLOSED, count=6)
    latest = log.latest("rms_norm")
    assert not latest.defined and latest.error.startswith(f"SyntaxError on line {LINE}")
    assert namespace["rms_norm"] is passing and log.defined_by("rms_norm").count == 5
    run(log, namespace, "undefined_name\n" + RMS.solution_source, count=7)        # stops above the def
    assert log.latest("rms_norm").error.startswith("NameError on line 1")
    run(log, namespace, "print(rms_norm)", count=8)                             # uses it: not a run of it
    assert log.latest("rms_norm").count == 7


def test_a_cell_that_raises_after_its_def_did_define_it():
    log, namespace = fresh()
    source = RMS.solution_source + "\nrms_norm(1)\n"
    run(log, namespace, source)
    line = line_of(source, "rms_norm(1)")
    assert log.latest("rms_norm").defined and log.latest("rms_norm").error.startswith(f"TypeError on line {line}")


def test_the_same_cell_run_again_without_its_def_is_a_run_of_it():
    """With cell ids (JupyterLab), a later run of the defining cell counts even when its text
    no longer reads as a definition."""
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, cell_id="abc")
    run(log, namespace, "de rms_norm(x):\n", cell_id="abc")
    assert not log.latest("rms_norm").defined and log.latest("rms_norm").error.startswith("SyntaxError")
    run(log, namespace, "def rms_norm_2(x):\n    return x\n", cell_id="abc")
    assert not log.latest("rms_norm").defined and log.latest("rms_norm").error == ""


def test_a_value_assigned_again_is_a_new_run_of_it():
    log, namespace = fresh()
    run(log, namespace, "n_params = 5", count=1)
    run(log, namespace, "n_params = 5", count=2)      # the same small int object: read from the text
    assert log.latest("n_params").count == 2 and log.latest("n_params").defined


def test_a_run_whose_end_was_never_reported_counts_when_the_next_starts():
    log, namespace = fresh()
    log.started(RMS.solution_source, None, namespace)
    exec(RMS.solution_source, namespace)
    log.started("x = 1", None, namespace)                  # no finished() in between
    assert log.latest("rms_norm").defined and log.running == 2


# ---------------------------------------------------------------- judging

def write_notebook(folder, exercise_source, name="03_norms_and_residuals.ipynb", cell_id="ex-cell",
                   outputs=(), setup="import numpy as np"):
    cells = [{"cell_type": "code", "id": "setup", "metadata": {"tags": ["setup"]}, "source": setup,
              "outputs": [], "execution_count": None},
             {"cell_type": "code", "id": cell_id, "metadata": {"tags": ["exercise"], "course": {"exercise": "rms-norm"}},
              "source": exercise_source.splitlines(True), "outputs": list(outputs), "execution_count": None}]
    path = folder / name
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_failed_run_gets_no_verdict_and_says_why(tmp_path):
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, count=3)
    run(log, namespace, UNCLOSED, count=4)
    log.started("check('rms-norm')", None, namespace)
    fb, note = judge(RMS, namespace, log, tmp_path)
    assert isinstance(fb, Unjudged) and fb.kind == "not-run" and fb.status == "blank"
    assert not fb.passed and not fb.attempted and note == ""
    assert fb.headline == "Your exercise cell did not run"
    assert re.search(rf"Its latest run, \[4\] \(at \d\d:\d\d\), stopped before defining `rms_norm`: SyntaxError "
                     rf"on line {LINE}", fb.details[0])
    assert "from an earlier run, [3]" in fb.details[1]
    assert fb.text().startswith("[not checked] rms-norm: Your exercise cell did not run")


def test_a_cell_changed_after_its_run_gets_no_verdict_once_the_notebook_is_saved(tmp_path):
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, count=3)
    later = time.time() + 2
    path = write_notebook(tmp_path, RMS.solution_source.replace("* gain", "* gain * 2"))
    os.utime(path, (later, later))                        # saved after the run
    fb, _ = judge(RMS, namespace, log, tmp_path, now=later + 1)
    assert fb.kind == "changed" and fb.headline == "You changed the cell since you ran it"
    assert re.search(r"03_norms_and_residuals.ipynb, saved at \d\d:\d\d, no longer holds the code that ran as \[3\]",
                     fb.details[0])
    write_notebook(tmp_path, RMS.solution_source)         # saved again: it holds what ran
    os.utime(path, (later, later))
    assert judge(RMS, namespace, log, tmp_path)[0] is None


def test_a_notebook_saved_before_the_run_tells_nothing(tmp_path):
    path = write_notebook(tmp_path, "def rms_norm(x, gain, eps=1e-5):\n    return ____\n")
    os.utime(path, (time.time() - 60, time.time() - 60))
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, count=9)
    log.started("check('rms-norm')", None, namespace)
    fb, note = judge(RMS, namespace, log, tmp_path)
    assert fb is None and re.fullmatch(r"Judged: the `rms_norm` defined when your cell ran as \[9\], at \d\d:\d\d\.", note)


def test_with_a_cell_id_that_cells_saved_text_is_compared(tmp_path):
    """Another cell holding the same text does not hide a change to the cell that ran."""
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, cell_id="ex-cell", count=2)
    path = write_notebook(tmp_path, RMS.solution_source + "# edited\n", setup=RMS.solution_source)
    later = time.time() + 2
    os.utime(path, (later, later))
    assert judge(RMS, namespace, log, tmp_path)[0].kind == "changed"
    assert saved.compare_run(RMS.solution_source, None, "rms-norm", later - 5, tmp_path).same  # no id: any cell


def test_another_notebook_saved_later_is_not_compared(tmp_path):
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source)
    other = tmp_path / "notes.ipynb"
    other.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}}]}))
    (tmp_path / "broken.ipynb").write_text("{ not json")
    assert judge(RMS, namespace, log, tmp_path)[0] is None


def test_the_note_asks_to_rerun_when_other_cells_ran_after_the_exercise(tmp_path):
    log, namespace = fresh()
    run(log, namespace, RMS.solution_source, count=1)
    run(log, namespace, "x = 2", count=2)
    log.started("check('rms-norm')", None, namespace)
    assert "Changed the cell since? Run it again" in judge(RMS, namespace, log, tmp_path)[1]


def test_when_a_run_was_is_said_by_the_clock_so_that_a_saved_output_stays_true():
    noon = time.mktime((2026, 12, 6, 12, 0, 0, 0, 0, -1))
    assert ago(noon, noon + 2) == ago(noon, noon + 7200) == "at 12:00"              # the same day
    assert ago(noon - 86400, noon) == "on 5 Dec at 12:00"                           # the day before


# ---------------------------------------------------------------- in a kernel: check() and begin()

SETUP = "import numpy as np\nfrom engine.notebook import ____, ask, begin, check, hint, solution\nbegin()"


def test_check_in_a_kernel_grades_only_what_ran_and_records_accordingly(tmp_path):
    record = "from engine.core.progress import exercise_entry as e\n"
    cells = [SETUP,
             "assert check('rms-norm').feedback.kind == 'missing'",               # never ran here
             record + "assert e('rms-norm').get('attempts', 0) == 0 and e('rms-norm')['checks'] == 1",
             RMS.solution_source,
             "assert check('rms-norm').feedback.passed",
             UNCLOSED,
             "fb = check('rms-norm').feedback\nassert fb.kind == 'not-run', fb.text()\n"
             f"assert 'SyntaxError on line {LINE}' in fb.text()",
             record + "assert e('rms-norm')['attempts'] == 2 and e('rms-norm').get('misses', 0) == 0",
             RMS.solution_source.replace("* gain", "* gain * 2"),
             "fb = check('rms-norm').feedback\nassert fb.kind == 'values'\n"
             "assert any(d.startswith('Judged: the `rms_norm` defined when your cell ran') for d in fb.details)"]
    errors = run_in_ipython(cells, tmp_path)
    assert errors[5].startswith("SyntaxError") and errors[:5] + errors[6:] == [None] * (len(cells) - 1)


def test_a_new_kernel_says_what_the_progress_holds_and_it_does_not(tmp_path):
    """The setup cell of a notebook saved with labs, whose exercise passed before this kernel."""
    record = Progress()
    record.record_check("rms-norm", True, "pass")
    record.save()
    setup = ("from IPython.utils.capture import capture_output\nwith capture_output() as shown:\n"
             "    from engine.notebook import ____, begin, check\n    begin()")
    write_notebook(tmp_path, RMS.template, setup=setup,
                   outputs=[{"output_type": "display_data", "data": {saved.WIDGET_VIEW: {"model_id": "x"}}}])
    shown = "text = ''.join(o.data.get('text/plain', '') for o in shown.outputs)\n"
    cells = [setup,
             shown + "assert text.startswith(\"This notebook's kernel has just started\"), text\n"
                     "assert '`rms_norm` passed its check' in text and 'model not found' in text",
             setup,                                                          # once per kernel
             shown + "assert text == ''"]
    assert run_in_ipython(cells, tmp_path) == [None] * len(cells)


def test_restart_lines_name_the_passed_functions_and_the_saved_labs():
    record = Progress()
    record.record_check("rms-norm", True, "pass")
    record.record_check("layer-norm", False, "values")
    names = restart.passed_functions(["layer-norm", "rms-norm", "no-such-exercise"], record)
    assert names == ["rms_norm"]
    lines = restart.restart_lines(names, saved_labs=False)
    assert "`rms_norm` passed its check" in lines[0] and "its check passes again" in lines[0]
    assert "model not found" in lines[1] and lines[-1] == restart.RUN_ALL
    assert "their checks pass again" in restart.restart_lines(["a", "b"], False)[0]
    assert restart.restart_lines([], saved_labs=True)[0].startswith("A lab saved from an earlier kernel")
    assert restart.restart_lines([], saved_labs=False) == []


def test_this_notebook_is_found_by_its_running_setup_cell(tmp_path):
    write_notebook(tmp_path, RMS.template, setup=SETUP)
    write_notebook(tmp_path, RMS.template, name="other.ipynb", setup="import numpy as np")
    path, notebook = saved.this_notebook(tmp_path, SETUP + "\n")
    assert path.name == "03_norms_and_residuals.ipynb" and saved.exercise_ids(notebook) == ["rms-norm"]
    assert saved.this_notebook(tmp_path, "print(1)") is None
    assert saved.this_notebook(tmp_path, "", session="sub/other.ipynb")[0].name == "other.ipynb"
    assert not saved.has_widget_outputs(notebook)


def test_a_labs_badge_says_a_function_passed_before_this_kernel_started():
    from engine.core import own
    from engine.kit.own_function import OwnFunctionSwitch
    from labs.norms.stack import LAYER_NORM_USE

    own.forget_all()
    fresh_switch = OwnFunctionSwitch([LAYER_NORM_USE])
    fresh_switch.run(lambda norm: None)
    assert "pass the check of" in fresh_switch.badge.value
    record = Progress()
    record.record_check("layer-norm-fix", True, "pass")
    record.save()
    restarted = OwnFunctionSwitch([LAYER_NORM_USE])
    restarted.run(lambda norm: None)
    assert "passed its check before this kernel started: run its exercise cell and its check again" \
        in restarted.badge.value
    assert restarted.checkbox.disabled


def test_a_check_run_alone_in_a_new_kernel_says_the_exercise_passed_before():
    from engine.notebook import check

    record = Progress()
    record.record_check("rms-norm", True, "pass")
    record.save()
    before = Progress.load().exercise("rms-norm")
    fb = check("rms-norm", {}).feedback                     # the function is not in this kernel
    assert fb.status == "pass" and not fb.passed and fb.headline == "Passed before this kernel started"
    assert "run the exercise cell above" in fb.text() and "[passed]" in fb.text()
    after = Progress.load().exercise("rms-norm")
    assert after["passed"] and after.get("attempts") == before.get("attempts")
    assert after.get("misses", 0) == before.get("misses", 0)
    fresh = check("layer-norm", {}).feedback                # never passed: not attempted, as before
    assert fresh.status == "blank" and fresh.headline == "Not attempted yet"


# ---------------------------------------------------------------- a function that is not the learner's

SIXTEEN = get_exercise("rms-norm-16bit")


def test_the_course_s_own_function_bound_by_a_later_cell_is_not_judged_nor_recorded(tmp_path):
    """Run All with the exercise left blank: a later cell's ``from lib.norm import rms_norm``
    rebinds the name; its check says whose function it is and records no pass and no try."""
    record = "from engine.core.progress import exercise_entry as e\n"
    cells = [SETUP,
             SIXTEEN.template,                                                      # left blank
             "from lib.norm import rms_norm, root_mean_square",                    # a later cell
             "fb = check('rms-norm-16bit').feedback\n"
             "assert not fb.passed and fb.kind == 'not-yours' and fb.status == 'blank', fb.text()\n"
             "assert \"`rms_norm` here is the course's own lib.norm.rms_norm, bound by the cell that ran as\" "
             "in fb.text(), fb.text()\n"
             "assert 'Run your exercise cell again' in fb.text() and 'judged nothing' in fb.text()",
             record + "x = e('rms-norm-16bit')\n"
             "assert not x.get('passed') and x.get('attempts', 0) == 0 and x.get('misses', 0) == 0, x"]
    assert run_in_ipython(cells, tmp_path) == [None] * len(cells)


def test_a_function_imported_by_a_later_cell_is_not_judged_as_the_learner_s(tmp_path):
    """Not the course's own, but bound by a cell that holds no ``def rms_norm(``: an import."""
    (tmp_path / "elsewhere.py").write_text(RMS.solution_source.replace("def rms_norm", "import numpy as np\n"
                                                                        "def rms_norm", 1))
    cells = [SETUP, RMS.template, "from elsewhere import rms_norm",
             "fb = check('rms-norm').feedback\nassert fb.kind == 'not-yours' and not fb.passed, fb.text()\n"
             "assert 'which does not define it' in fb.text(), fb.text()",
             RMS.solution_source,                                                   # the learner's own
             "assert check('rms-norm').feedback.passed"]
    assert run_in_ipython(cells, tmp_path) == [None] * len(cells)


def test_the_reference_passed_to_check_outside_a_notebook_is_not_judged(tmp_path):
    import lib.norm
    from engine.notebook import check

    fb = check("rms-norm", {"rms_norm": lib.norm.rms_norm, "np": np}).feedback
    assert fb.kind == "not-yours" and not fb.passed
    assert "`rms_norm` here is the course's own lib.norm.rms_norm, not your function." in fb.text()
    assert Progress.load().exercise("rms-norm").get("passed") is not True


def test_a_check_run_again_on_the_same_cell_counts_one_try(tmp_path):
    """Each Run All re-runs the exercise cell and its check: the same code, the same try."""
    record = "from engine.core.progress import exercise_entry as e\n"
    wrong = RMS.solution_source.replace("* gain", "* gain * 2")
    check_it = "check('rms-norm')"
    cells = [SETUP, wrong, check_it, wrong, check_it,                            # Run All twice
             record + "assert (e('rms-norm')['attempts'], e('rms-norm')['misses']) == (1, 1), e('rms-norm')",
             RMS.solution_source, check_it, RMS.solution_source, check_it,
             record + "x = e('rms-norm')\nassert (x['attempts'], x['misses'], x['passed']) == (2, 1, True), x"]
    assert run_in_ipython(cells, tmp_path) == [None] * len(cells)
