"""The progress record, its file and location rules, the hint ladder and solution lock, and the
progress view."""

import json
import os
import re
from pathlib import Path

import pytest

from engine.core import hints, progress, review, skip_ahead
from engine.core import progress_file as storage
from engine.core.progress import Progress
from engine.core.registry import all_exercises, get_exercise, notebooks

SAVED = Path(__file__).parent / "saved_progress" / "course-progress-v1.json"


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(path))
    progress.notices()
    return path


# ---------------------------------------------------------------- location

def test_env_variable_wins(progress_file):
    assert progress.progress_path() == progress_file


def test_drive_root_in_jupyterlite(monkeypatch, tmp_path):
    from engine.core import release

    monkeypatch.delenv("COURSE_PROGRESS_FILE")
    real = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: p == "/drive" or real(p))
    assert progress.progress_path() == Path("/drive/course-progress.json")
    assert release.workspace_root() == Path("/drive")    # the notebooks are there too


def test_local_walks_up_to_the_start_notebook(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_PROGRESS_FILE")
    real = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: False if p == "/drive" else real(p))
    (tmp_path / "00_start_here.ipynb").write_text("{}")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert progress.progress_path() == tmp_path.resolve() / "course-progress.json"
    (tmp_path / "00_start_here.ipynb").unlink()
    assert progress.progress_path() == sub.resolve() / "course-progress.json"


# ---------------------------------------------------------------- recording and status

def test_missing_file_is_empty_and_not_reported(progress_file):
    assert not progress_file.exists()
    assert progress.load().data["exercises"] == {}
    assert progress.notices() == []


def test_statuses():
    assert progress.status_of({}) == "not-started"
    progress.record_check("row-mean", False, "blank")
    assert progress.status_of(progress.exercise_entry("row-mean")) == "not-started"
    progress.record_check("row-mean", False, "shape")
    assert progress.status_of(progress.exercise_entry("row-mean")) == "attempted"
    progress.record_check("row-mean", True, "pass")
    assert progress.status_of(progress.exercise_entry("row-mean")) == "passed"
    progress.record_check("stable-softmax", False, "values")
    progress.record_reveal("stable-softmax")
    progress.record_check("stable-softmax", True, "pass")
    assert progress.status_of(progress.exercise_entry("stable-softmax")) == "passed-after-solution"


def test_solution_only_after_an_attempt():
    ex, record = get_exercise("row-mean"), Progress()
    assert hints.reveal_solution(ex, record) is None
    assert not record.exercise("row-mean").get("solution_revealed")
    record.record_check("row-mean", False, "blank")  # running the check with blanks is no attempt
    assert hints.reveal_solution(ex, record) is None
    record.record_check("row-mean", False, "values")
    source = hints.reveal_solution(ex, record)
    assert "x.sum(axis=-1, keepdims=True)" in source
    assert record.exercise("row-mean")["solution_revealed"] is True


def test_hint_ladder_one_more_per_request_and_capped():
    ex, record = get_exercise("row-mean"), Progress()
    total = len(ex.hints)
    levels = [hints.next_hint(ex, record)[0] for _ in range(total + 2)]
    assert levels == list(range(1, total + 1)) + [total, total]
    assert record.exercise("row-mean")["hints"] == total
    assert hints.hints_seen(ex, record) == list(ex.hints)


def test_checks_without_a_verdict_are_no_attempt_and_no_miss():
    """A function never defined in this kernel ("missing") or a cell changed since it ran is no
    attempt; a cell that stopped before defining the function is an attempt but no miss."""
    record = Progress()
    for kind in ("missing", "changed", "blank"):
        record.record_check("row-mean", False, kind)
    entry = record.exercise("row-mean")
    assert entry["checks"] == 3 and "attempts" not in entry and "misses" not in entry
    assert record.status("row-mean") == "not-started"
    record.record_check("row-mean", False, "not-run")
    entry = record.exercise("row-mean")
    assert entry["attempts"] == 1 and "misses" not in entry and record.status("row-mean") == "attempted"
    record.record_check("row-mean", False, "values")
    assert record.exercise("row-mean")["misses"] == 1


def test_a_failed_check_climbs_the_ladder_only_after_a_wrong_result():
    ex, record = get_exercise("row-mean"), Progress()
    for kind in ("error", "none", "type"):
        assert hints.hint_after_miss(ex, record, kind) is None
    assert hints.hints_seen(ex, record) == []
    levels = [hints.hint_after_miss(ex, record, "values") for _ in range(len(ex.hints) + 1)]
    assert [step[0] for step in levels[:-1]] == list(range(1, len(ex.hints) + 1))
    assert levels[-1] is None and hints.hints_left(ex, record) == 0   # used up: nothing repeated


def test_a_hint_is_never_passed_over_for_its_words_nor_counted_as_seen_unshown():
    """ffn-width's hints speak of "columns" and nudge-growth's of "a grid of the same shape", in
    the words' ordinary sense: after a miss whose results had the right shape, the ladder still
    climbs them in order, one per miss. A hint declared about the shape (row-mean's) waits, and
    nothing is recorded as seen."""
    for ex_id in ("ffn-width", "nudge-growth"):
        ex, record = get_exercise(ex_id), Progress()
        steps = [hints.hint_after_miss(ex, record, "values", ("shape",)) for _ in ex.hints]
        assert [(level, text) for level, _total, text in steps] == list(enumerate(ex.hints, start=1))
    ex, record = get_exercise("row-mean"), Progress()
    assert all(getattr(h, "about", "") == "shape" for h in ex.hints)
    assert hints.hint_after_miss(ex, record, "values", ("shape",)) is None
    assert hints.hints_seen(ex, record) == [] and "hints" not in record.exercise("row-mean")
    assert hints.hint_after_miss(ex, record, "values", ())[0] == 1          # the shape was wrong: it is shown


def test_a_record_changes_in_memory_until_saved(progress_file):
    record = Progress.load()
    record.record_check("row-mean", True, "pass")
    assert record.status("row-mean") == "passed" and not progress_file.exists()
    assert record.save() and progress.load().status("row-mean") == "passed"


def test_damaged_optional_sections_are_replaced_not_raised(progress_file):
    assert storage.write(document(review=[], test_out="x", release_choices=None))
    record = Progress.load()
    assert record.review("row-mean") == {} and record.skip_ahead("01_positional_encoding") == {}
    assert record.kept_release("01_positional_encoding.ipynb") is None
    record.record_review("row-mean", "exercise", True)
    record.record_skip_ahead("01_positional_encoding", 4, 4)
    record.keep_release("01_positional_encoding.ipynb", "abc")
    assert record.review("row-mean")["passed"] and record.skip_ahead("01_positional_encoding")["passed"]
    assert record.kept_release("01_positional_encoding.ipynb") == "abc"


def document(**sections) -> dict:
    """A progress file's document with these sections besides the empty ones."""
    return {**storage.empty_record(), **sections}


# ---------------------------------------------------------------- files of the previous release

def test_a_progress_file_of_the_previous_release_loads_unchanged(progress_file):
    """It loads as it was; saved again, it is the same document but for the skip-ahead section,
    which earlier releases named "test_out" and is now written under "skip_ahead"."""
    progress_file.write_bytes(SAVED.read_bytes())
    record = Progress.load()
    assert progress.notices() == []
    assert [record.status(e) for e in ("row-mean", "layer-norm", "stable-softmax")] == [
        "passed", "passed-after-solution", "not-started"]
    assert record.question("start-predict-softmax")["answer"] == 0
    # "layer-norm" was replaced by "layer-norm-fix" (retired): its record stays, the review skips it
    assert [it.id for it in review.items(record)] == ["row-mean", "start-predict-softmax",
                                                       "start-shape-row-mean"]
    assert [it.cleared for it in review.items(record)] == [False, True, False]
    assert skip_ahead.skipped_ahead("01_positional_encoding", record)
    assert not skip_ahead.skipped_ahead("03_norms_and_residuals", record)
    assert record.kept_release("02_feed_forward.ipynb") == "abc123def456"
    assert record.learner() == {"name": "Ada L. (s1234)", "id": "47598e31badb"}
    record.save()
    again = json.loads(progress_file.read_text())
    saved = json.loads(SAVED.read_text())
    assert again.pop("updated") and saved.pop("updated")
    assert "test_out" in saved and "test_out" not in again
    saved["skip_ahead"] = saved.pop("test_out")
    assert again == saved


def test_a_section_under_its_old_name_and_its_new_keeps_the_new_entries():
    data = document(test_out={"01_positional_encoding": {"passed": True}, "02_feed_forward": {"attempts": 1}},
                    skip_ahead={"02_feed_forward": {"attempts": 3}})
    record = Progress(data)
    assert record.skip_ahead("01_positional_encoding") == {"passed": True}
    assert record.skip_ahead("02_feed_forward") == {"attempts": 3} and "test_out" not in record.data


def test_the_record_writes_the_file_the_previous_release_wrote(progress_file):
    """The same history, recorded now, gives the same file (times and the random id aside), its
    skip-ahead section under today's name."""
    ex = get_exercise("layer-norm")
    progress.record_check("row-mean", False, "values")
    progress.record_check("row-mean", True, "pass")
    progress.record_check("stable-softmax", False, "blank")
    progress.record_check("layer-norm", False, "nan")
    progress.record_hint("layer-norm", 2)
    progress.record_reveal("layer-norm")
    progress.record_answer("start-predict-softmax", 0, False, lock=True)
    progress.record_answer("start-number-equal-scores", "0.3", False)
    progress.record_answer("start-number-equal-scores", "0.2", True)
    progress.record_question_reveal("start-shape-row-mean")
    review.check_exercise("layer-norm", ex.solution_source)
    review.answer_question("start-predict-softmax", 1)
    skip_ahead.record_attempt("03_norms_and_residuals", 3, 4)
    skip_ahead.record_attempt("01_positional_encoding", 4, 4)
    record = progress.load()
    record.keep_release("02_feed_forward.ipynb", "abc123def456")
    record.save()
    progress.export_text(learner="Ada L. (s1234)")

    def timeless(text):
        text = re.sub(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"', '"TIME"', text)
        return json.loads(re.sub(r'"id": "[0-9a-f]{12}"', '"id": "ID"', text))
    assert timeless(progress_file.read_text()) == progress.renamed_sections(timeless(SAVED.read_text()))


def test_record_survives_a_restart(progress_file):
    progress.record_check("row-mean", True, "pass")
    progress.record_answer("start-number-equal-scores", "0.2", True)
    data = json.loads(progress_file.read_text())
    assert data["format"] == progress.record_format() and data["version"] == 1
    assert data["exercises"]["row-mean"]["passed"] is True
    assert data["questions"]["start-number-equal-scores"]["correct"] is True


@pytest.mark.parametrize("content", ["{not json", "[]", '{"format": "other"}', "\xff\xfe\x00garbage",
                                     '{"format": "transformer-course-progress", "exercises": [], "questions": {}}'])
def test_corrupt_file_is_reported_kept_aside_and_replaced(progress_file, content):
    progress_file.write_bytes(content.encode("latin-1"))
    data = storage.read()
    assert data["exercises"] == {}
    notes = progress.notices()
    assert notes and ("damaged" in notes[0] or "Could not read" in notes[0])
    assert json.loads(progress_file.read_text())["format"] == progress.record_format()
    assert (progress_file.parent / (progress_file.name + ".corrupt")).exists()
    progress.record_check("row-mean", True, "pass")  # and recording works again
    assert progress.exercise_entry("row-mean")["passed"]


def test_unwritable_location_is_reported_not_raised(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(blocker / "sub" / "progress.json"))
    progress.record_check("row-mean", True, "pass")  # must not raise
    assert any("Could not save" in n for n in progress.notices())


def test_check_shows_a_notice_for_a_corrupt_file(progress_file, capsys):
    from engine.notebook import check

    progress_file.write_text("garbage")
    check("row-mean", {})
    out = capsys.readouterr().out
    assert "damaged" in out and "Not attempted" in out


# ---------------------------------------------------------------- export, import, reset

def test_export_import_merge_and_reset():
    progress.record_check("row-mean", True, "pass")
    exported = progress.export_text()
    progress.reset()
    assert progress.load().data["exercises"] == {}
    progress.record_check("stable-softmax", False, "values")
    progress.import_text(exported)
    record = progress.load()
    assert record.exercise("row-mean")["passed"] is True
    assert record.exercise("stable-softmax")["attempts"] == 1
    progress.import_text(exported, replace=True)
    assert "stable-softmax" not in progress.load().data["exercises"]


def test_merge_keeps_the_better_result():
    progress.record_check("row-mean", False, "values")
    progress.record_reveal("row-mean")
    progress.record_check("row-mean", True, "pass")  # passed after the solution here
    other = progress.empty_record()
    other["exercises"]["row-mean"] = {"attempts": 5, "passed": True, "passed_after_solution": False}
    progress.import_text(json.dumps(other))
    entry = progress.exercise_entry("row-mean")
    assert entry["attempts"] == 5 and progress.status_of(entry) == "passed"


@pytest.mark.parametrize("text", ["nope", "{}", '{"format": "transformer-course-progress"}'])
def test_import_rejects_what_is_not_a_progress_file(text):
    with pytest.raises(ValueError):
        progress.import_text(text)


# ---------------------------------------------------------------- summary and view

def test_summary_lists_every_registered_exercise():
    progress.record_check("row-mean", True, "pass")
    rows = progress.summary()
    assert [r["id"] for r in rows] == [ex.id for ex in all_exercises()]
    assert {r["id"]: r["status"] for r in rows}["row-mean"] == "passed"


def test_progress_view_lists_all_notebooks_and_statuses():
    from engine.ui.progress_view import progress_view

    progress.record_check("row-mean", True, "pass")
    progress.record_check("stable-softmax", False, "values")
    view = progress_view()
    html = view.table.value
    for stem, _title, _module in notebooks():
        assert f'data-notebook="{stem}"' in html
    assert 'data-exercise="row-mean"' in html and "course-status-passed" in html
    assert "course-status-attempted" in html
    assert "course-progress-view" in view._dom_classes


def test_progress_view_reset_needs_confirmation():
    from engine.ui.progress_view import progress_view

    progress.record_check("row-mean", True, "pass")
    view = progress_view()
    view.reset_button.click()
    assert progress.exercise_entry("row-mean")["passed"]  # not yet
    view.cancel_button.click()
    assert progress.exercise_entry("row-mean")["passed"]
    view.reset_button.click()
    view.confirm_button.click()
    assert progress.exercise_entry("row-mean") == {}
    assert "course-status-passed" not in view.table.value


def test_progress_view_export_and_import():
    import base64
    import datetime

    from engine.ui.progress_view import progress_view

    progress.record_check("row-mean", True, "pass")
    view = progress_view()
    view.export_button.click()
    payload = view.link.value.split("base64,")[1].split('"')[0]
    exported = base64.b64decode(payload).decode()
    assert json.loads(exported)["exercises"]["row-mean"]["passed"]
    progress.reset()
    view.upload.value = ({"name": "course-progress.json", "type": "application/json", "size": 1,
                          "content": memoryview(exported.encode()), "last_modified": datetime.datetime(2026, 1, 1)},)
    assert progress.exercise_entry("row-mean")["passed"]
    assert "Imported" in view.message.value
    view.upload.value = ({"name": "x.json", "type": "", "size": 1, "content": memoryview(b"junk"),
                          "last_modified": datetime.datetime(2026, 1, 1)},)
    assert "Could not import" in view.message.value


def test_import_keeps_skip_ahead_review_and_release_records():
    skip_ahead.record_attempt("01_positional_encoding", 3, 4)      # not passed here
    exported = document(test_out={"01_positional_encoding": {"passed": True, "attempts": 1}},
                        review={"row-mean": {"cleared": True}},
                        release_choices={"01_positional_encoding.ipynb": "abc"})
    progress.import_text(json.dumps(exported))
    record = progress.load()
    assert record.skip_ahead("01_positional_encoding")["passed"] is True   # the better entry wins
    assert record.review("row-mean") == {"cleared": True}
    assert record.kept_release("01_positional_encoding.ipynb") == "abc"


def test_progress_view_marks_a_notebook_skipped_ahead():
    from engine.ui.progress_view import progress_table_html

    assert storage.write(document(
        test_out={"01_positional_encoding": {"passed": True, "passed_at": "2026-11-29T10:00:00"}}))
    assert "skipped ahead on 2026-11-29" in progress_table_html()


def test_the_same_code_judged_again_is_not_a_new_try():
    """Run All twice over a notebook re-runs every check on the code judged before: one try."""
    record = Progress()
    record.record_check("row-mean", False, "values", "code-a")
    record.record_check("row-mean", False, "values", "code-a")            # Run All again
    assert (record.exercise("row-mean")["attempts"], record.exercise("row-mean")["misses"]) == (1, 1)
    record.record_check("row-mean", True, "pass", "code-b")               # the fix: a new try, a pass
    record.record_check("row-mean", True, "pass", "code-b")
    record.record_check("row-mean", False, "blank", None)                 # no attempt: changes nothing
    record.record_check("row-mean", True, "pass", "code-b")
    entry = record.exercise("row-mean")
    assert (entry["attempts"], entry["misses"], entry["passed"], entry["checks"]) == (2, 1, True, 6)
    record.record_check("row-mean", False, "values", "code-a")            # back to the old code: a try
    assert record.exercise("row-mean")["attempts"] == 3


def test_code_judged_again_that_now_passes_still_records_the_pass():
    """Same cell, other cells changed around it: no new try, but a pass is a pass."""
    record = Progress()
    record.record_check("row-mean", False, "values", "code-a")
    record.record_check("row-mean", True, "pass", "code-a")
    entry = record.exercise("row-mean")
    assert (entry["attempts"], entry.get("passed")) == (1, True)


def test_without_a_fingerprint_every_judged_check_is_a_try():
    record = Progress()
    for _ in range(3):
        record.record_check("row-mean", False, "values")
    assert record.exercise("row-mean")["attempts"] == 3
