"""Where the trained model's arrays come from (lib/files.py): lib/trained/ in a checkout; in the
browser, the files the course site serves beside the course wheel, fetched through the fetcher
the course package declares, the first time they are needed, and checked."""

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest

from labs.decoder.models import trained_stored
from labs.norms import placement
from labs.norms import precomputed as norms_store
from labs.trained import held_out, precomputed
from lib import files, model, placement_runs, training_record
from tools.wheel import served_files, served_index

LOADERS = (model.weight_arrays, model.weights, model.heldout, model.heldout_texts, files.served,
           training_record.record, placement_runs.runs,
           precomputed.stored, precomputed.inputs_digest, held_out._setting_perplexities,
           norms_store.STORE.stored, placement._many_stacks)


@pytest.fixture
def as_in_the_browser(tmp_path, monkeypatch):
    """lib/trained/ as the course wheel holds it (model.json and served.json, no arrays) and a
    fetcher that answers from the checkout's files, counting what it is asked for."""
    served = served_files()
    (tmp_path / "model.json").write_bytes((files.FOLDER / "model.json").read_bytes())
    (tmp_path / "served.json").write_bytes(served_index(served))
    asked = []

    def fetch(name):
        asked.append(name)
        return served[name].read_bytes()

    monkeypatch.setattr(files, "FOLDER", tmp_path)
    monkeypatch.setattr(files, "fetcher", lambda: fetch)
    for loader in LOADERS:
        loader.cache_clear()
    yield asked
    for loader in LOADERS:
        loader.cache_clear()


def test_in_a_checkout_the_arrays_are_read_from_lib_trained():
    assert (files.FOLDER / "weights.npz").is_file() and files.served() == {}
    with files.load("weights.npz") as arrays, np.load(files.FOLDER / "weights.npz") as direct:
        assert np.array_equal(arrays["embedding"], direct["embedding"])


def test_the_model_gets_the_same_arrays_fetched_from_the_site_once_each(as_in_the_browser):
    source = next(p for p in served_files().values() if p.name == "weights.npz")      # the checkout's
    with np.load(source) as stored:
        embedding = stored["embedding"]
    w = model.weights()
    assert np.array_equal(w.embedding, embedding) and w.embedding.dtype == np.float32
    assert len(model.heldout_texts()) == 8 and model.heldout_texts()[0] is model.heldout()
    logits = model.forward(model.heldout().ids)
    assert np.abs(logits - model.heldout().logits).max() < 1e-4          # the check of test_lib_model
    model.weights(), model.heldout(), model.heldout_texts()
    # notebook 05's labs look their results up in the fetched precomputed.npz
    key = precomputed.key("labs.trained.held_out._setting_perplexities", held_out.setting(skip=(1,)))
    stored = {label: float(value) for label, value in precomputed.stored()[key].items()}
    assert held_out.setting_perplexities(skip=(1,)) == pytest.approx(stored, nan_ok=True, rel=0, abs=0)
    precomputed.stored(), held_out.setting_perplexities(skip=(1,))
    # the record of training and the placement runs, read as any other served file
    with np.load(next(p for p in served_files().values() if p.name == "training_record.npz")) as stored:
        assert np.array_equal(training_record.record().steps, stored["steps"])
    assert len(placement_runs.runs().curves) == len(placement_runs.runs().variants)
    training_record.record(), placement_runs.runs()
    # notebook 03's 50 stacks, looked up in the fetched placement_stacks.npz, not run again
    key = norms_store.STORE.key(*norms_store.STORE.shipped()[0])
    assert key in norms_store.STORE.stored()
    assert placement._many_stacks(depth=48, count=50)["pre_gaps"].shape == (50, 49)
    norms_store.STORE.stored(), placement._many_stacks(depth=48, count=50)
    assert sorted(as_in_the_browser) == sorted(served_files())           # each file fetched once


def test_counting_the_weights_needs_no_fetch(as_in_the_browser):
    assert trained_stored() == 448_512
    assert files.shapes("weights.npz")["embedding"] == (55, 96)
    assert as_in_the_browser == []


def test_a_failed_fetch_says_what_could_not_be_fetched_and_what_to_do(as_in_the_browser, monkeypatch):
    def offline(name):
        raise OSError("the request failed (NetworkError); is the site reachable?")

    monkeypatch.setattr(files, "fetcher", lambda: offline)
    with pytest.raises(files.FileUnavailable) as caught:
        model.weights()
    message = str(caught.value)
    assert message.startswith("Could not fetch the trained model's weights (weights-")
    assert "1.7 MB) from the course site: the request failed (NetworkError)" in message
    assert "Check the connection and run the cell again" in message


def test_bytes_that_are_not_the_built_ones_are_refused(as_in_the_browser, monkeypatch):
    monkeypatch.setattr(files, "fetcher", lambda: lambda name: b"<html>404 page of a proxy</html>")
    with pytest.raises(files.FileUnavailable, match="is not the one this course was built with"):
        model.heldout()


def test_without_a_fetcher_the_message_says_to_open_the_course_site(as_in_the_browser, monkeypatch):
    monkeypatch.setattr(files, "fetcher", lambda: None)
    with pytest.raises(files.FileUnavailable, match="no fetcher is installed.*open the notebook from the course site"):
        model.heldout_texts()


def test_a_file_neither_here_nor_served_is_named(as_in_the_browser):
    (files.FOLDER / "served.json").write_text("{}")
    files.served.cache_clear()
    with pytest.raises(files.FileUnavailable, match=r"the trained model's weights \(weights.npz\) are not in this "
                                                    "installation"):
        model.weights()
    with pytest.raises(files.FileUnavailable, match=r"the trained model's weights \(weights.npz\) are not in this "
                                                    "installation"):
        files.shapes("weights.npz")
    assert trained_stored() is None                                # no model: no preset count


def test_the_sites_fetcher_outside_the_browser_says_so():
    from engine.core import site_files

    with pytest.raises(OSError, match="only the course site's kernel"):
        site_files.fetch("weights-0123456789ab.npz")


def test_served_names_hold_a_hash_of_the_bytes():
    for name, path in served_files().items():
        assert name == f"{path.stem}-{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}.npz"


def test_the_shapes_of_a_file_are_read_once_and_again_when_the_file_changes(tmp_path):
    path = tmp_path / "arrays.npz"
    np.savez(path, a=np.zeros((2, 3)))
    reads = files._shapes_in.cache_info().misses
    assert files.shapes_in(path) == files.shapes_in(path) == {"a": (2, 3)}
    assert files._shapes_in.cache_info().misses == reads + 1
    files.shapes_in(path)["a"] = (9,)                      # a caller's copy: the next one is unchanged
    assert files.shapes_in(path) == {"a": (2, 3)}
    np.savez(path, a=np.zeros((4, 5, 6)), b=np.zeros(7))   # another size: read again
    assert files.shapes_in(path) == {"a": (4, 5, 6), "b": (7,)}
    assert files._shapes_in.cache_info().misses == reads + 2


def test_the_fetcher_is_the_one_the_course_package_declares_and_none_without_one(monkeypatch):
    from engine.core import site_files

    assert files.fetcher() is site_files.fetch
    monkeypatch.setattr(files.metadata, "entry_points", lambda group: [])
    assert files.fetcher() is None


def test_shapes_come_from_the_file_here_and_else_from_what_the_site_serves(tmp_path, monkeypatch):
    np.savez(tmp_path / "weights.npz", a=np.zeros((3, 4)))
    (tmp_path / "served.json").write_text(json.dumps({"weights.npz": {"arrays": {"a": [9, 9]}}}))
    monkeypatch.setattr(files, "FOLDER", tmp_path)
    files.served.cache_clear()
    try:
        assert files.shapes("weights.npz") == {"a": (3, 4)}                   # the file here first
        (tmp_path / "weights.npz").unlink()
        assert files.shapes("weights.npz") == {"a": (9, 9)}                   # else the site's index
    finally:
        files.served.cache_clear()


def test_array_headers_of_version_1_and_2_are_read_and_any_other_refused(tmp_path):
    def archive(path, versions):
        with zipfile.ZipFile(path, "w") as out:
            for name, version in versions:
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, np.zeros((2, 5)), version=version)
                out.writestr(name + ".npy", buffer.getvalue())
        return path

    assert files.shapes_in(archive(tmp_path / "a.npz", [("one", (1, 0)), ("two", (2, 0))])) == \
        {"one": (2, 5), "two": (2, 5)}
    with pytest.raises(ValueError, match=r"three.npy is a .npy file of version \(3, 0\), not 1.0 or 2.0"):
        files.shapes_in(archive(tmp_path / "b.npz", [("three", (3, 0))]))
