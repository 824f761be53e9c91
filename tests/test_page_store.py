"""The progress record kept in the browser's storage where the kernel has no drive
(engine/core/page_store.py): how two records merge, and what the learner is told. The
browser side itself runs in Chromium: tests/test_browser_classroom.py."""

import json

from engine.core import page_store, progress
from engine.core.progress import Progress
from engine.ui.storage_view import storage_html


def record(**entries):
    data = Progress().data
    data.update(json.loads(json.dumps(entries)))
    return data


def test_two_notebooks_records_add_up_and_the_newer_wins_where_they_disagree():
    stored = record(exercises={"row-mean": {"checks": 2, "attempts": 2, "passed": True, "passed_after_solution": False}},
                    questions={"q1": {"answer": "a", "correct": False}},
                    learner={"name": "Ada", "id": "x1"})
    mine = record(exercises={"stable-softmax": {"checks": 1, "attempts": 1, "misses": 1},
                             "row-mean": {"checks": 1, "attempts": 1}},
                  questions={"q1": {"answer": "b", "correct": True}},
                  learner={"name": "Ada L.", "id": "x1"})
    merged = progress._merged_records(stored, mine)
    assert merged["exercises"]["row-mean"]["passed"] is True and merged["exercises"]["row-mean"]["checks"] == 2
    assert merged["exercises"]["stable-softmax"]["misses"] == 1
    assert merged["questions"]["q1"]["answer"] == "b", "the record being saved is the newer one"
    assert merged["learner"]["name"] == "Ada L."
    assert progress._merged_records({"not": "a record"}, mine) == mine, "damaged storage is not merged in"


def test_what_the_learner_is_told_in_each_state():
    assert storage_html({"state": "off"}) == "" and storage_html({"state": "pending"}) == ""
    kept = storage_html({"state": "kept"})
    assert "Your progress is kept in this browser" in kept and "served over plain http://" in kept
    assert "no service worker" in storage_html({"state": "kept", "secure": True})
    failed = storage_html({"state": "failed", "reason": "its storage is blocked: a private window, or a browser "
                                                        "set to keep no site data"})
    assert "Your progress will not be kept" in failed and "its storage is blocked" in failed
    assert "lasts only until the page is reloaded" in failed and "export your progress" in failed
    assert "course-storage-failed" in failed


def test_outside_the_browser_nothing_is_mirrored(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "p.json"))
    assert not page_store.needed()
    progress.record_check("row-mean", True, "pass")
    assert page_store.state()["state"] == "off"
