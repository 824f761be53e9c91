"""The results notebook 05 and its labs look up (lib/trained/precomputed.npz, labs/trained/precomputed.py):
current for the committed weights and texts, equal to a live run, and never read for other inputs."""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from labs.trained import heads, held_out, precomputed
from lib import files, model
from lib.initialisation import RULES

ROOT = Path(__file__).resolve().parent.parent


def shipped():
    """[(function name, keyword arguments)] of every result the course ships."""
    held_out, heads  # noqa: B018 - importing them registers their functions
    return [(name, kwargs) for name, (_function, arguments) in precomputed.FUNCTIONS.items() for kwargs in arguments()]


def live(name, kwargs):
    return precomputed.FUNCTIONS[name][0](**kwargs)


def assert_same(found, expected, what):
    assert set(found) == set(expected), what
    for field, value in expected.items():
        np.testing.assert_allclose(np.asarray(found[field], dtype=np.float64), np.asarray(value, dtype=np.float64),
                                   rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=f"{what}: {field}")


def test_the_file_holds_a_result_for_every_shipped_input_of_the_committed_weights_and_texts():
    stored = precomputed.stored()
    missing = [(name, kwargs) for name, kwargs in shipped() if precomputed.key(name, kwargs) not in stored]
    assert not missing, (f"{len(missing)} results are not in lib/trained/precomputed.npz for today's weights and "
                         f"texts (first: {missing[0]}): run `.venv/bin/python -m training.precomputed`")
    assert len(stored) == len(shipped())                 # and nothing else: no result of older inputs
    counts = {name: sum(1 for n, _k in shipped() if n == name) for name in precomputed.FUNCTIONS}
    # notebook 05's two tables; the ablation lab's 32 settings with the mismatch lab's 630 (two are
    # the same: as trained, and no positions); the mismatch lab's 630; the ablation lab's 32; every
    # head pooled, and on each of the 8 texts; the heads lab's maps of each of the 61 copy and
    # reverse sentences, and each text's perplexities with every head
    assert counts == {"labs.trained.held_out._pooled_run": 11, "labs.trained.held_out._setting_perplexities": 660,
                      "labs.trained.held_out._first_text_changes": 630, "labs.trained.held_out._watched_words": 32,
                      "labs.trained.heads._pooled_looks": 1, "labs.trained.heads._pooled_perplexities": 17,
                      "labs.trained.heads._text_without_head": 8 * 16, "labs.trained.heads._sentence_maps": 61,
                      "labs.trained.heads._text_perplexities": 8}


def chosen(seed: int) -> list:
    """A spread of the stored results: notebook 05's tables as trained, without block 1, without
    positions and with ε 0.1; the heads' weights pooled and the copy and reverse perplexities with
    every head and without block 2's head 2 (the notebook's); the mismatch lab's extreme RoPE bases
    and ε with LayerNorm, either pairing; three results of each other function, drawn with ``seed``."""
    everything = shipped()
    rng = np.random.default_rng(seed)
    table = [held_out.setting(**s) for s in ({}, {"skip": (0,)}, {"positions": False}, {"eps": 0.1})]
    found = [(n, k) for n, k in everything if n.endswith("_pooled_run") and k in table]
    found += [(n, k) for n, k in everything if n.endswith("_pooled_looks")
              or (n.endswith("_pooled_perplexities") and k in ({"block": None, "head": None}, {"block": 2, "head": 2}))]
    found += [(n, k) for n, k in everything if n.endswith("_first_text_changes")
              and k["base"] in (100.0, 1e6) and k["eps"] in (1e-8, 1.0) and k["norm"] == "layer" and k["positions"]]
    for name in ("_setting_perplexities", "_first_text_changes", "_watched_words", "_text_without_head",
                 "_sentence_maps", "_text_perplexities"):
        results = [(n, k) for n, k in everything if n.endswith(name)]
        found += [results[i] for i in sorted(rng.choice(len(results), size=3, replace=False).tolist())]
    return found


def differences(seed: int) -> list:
    """The chosen results (``chosen``) whose stored value is not the live run's, as messages."""
    stored, problems = precomputed.stored(), []
    for name, kwargs in chosen(seed):
        try:
            assert_same(stored[precomputed.key(name, kwargs)], live(name, kwargs), f"{name}({kwargs})")
        except AssertionError as error:
            problems.append(str(error))
    return problems


def test_the_stored_results_equal_a_live_run():
    """The spread of ``chosen`` (a new random draw each day, so that over time every result is
    tried), computed again in a fresh process with one BLAS thread (small products on a shared
    machine are many times slower with more) and compared with the stored results."""
    seed = datetime.date.today().toordinal()
    assert len(chosen(seed)) == 4 + 3 + 8 + 6 * 3
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "import json, test_precomputed as t; "
                           f"print(json.dumps(t.differences({seed})))"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    problems = json.loads(done.stdout.strip().splitlines()[-1])
    assert not problems, "\n".join(problems)


def test_a_lookup_gives_the_stored_result_and_a_miss_computes_it(monkeypatch):
    name, kwargs = "labs.trained.heads._text_without_head", {"text": 0, "block": 3, "head": 1}
    stored = precomputed.stored()[precomputed.key(name, kwargs)]
    calls = []
    block = model.block
    monkeypatch.setattr(model, "block", lambda x, weights, **options: calls.append(1) or block(x, weights, **options))
    heads._text_without_head.cache_clear()
    assert heads.text_without_head(0, 3, 1) == stored and not calls           # looked up, nothing run
    # Other weights or texts: another key, so the stored result is never read, and the model runs.
    monkeypatch.setattr(precomputed, "inputs_digest", lambda: "other weights")
    assert precomputed.key(name, kwargs) not in precomputed.stored()
    heads._text_without_head.cache_clear()
    assert heads.text_without_head(0, 3, 1) == pytest.approx(stored) and calls
    heads._text_without_head.cache_clear()


def test_without_the_file_every_result_is_computed_live(monkeypatch):
    def unavailable(name):
        raise files.FileUnavailable(f"{name} is not here")

    precomputed.stored.cache_clear()
    monkeypatch.setattr(files, "load", unavailable)
    try:
        assert precomputed.stored() == {}
    finally:
        precomputed.stored.cache_clear()


def test_equal_settings_share_one_key():
    same = [held_out.setting(skip=[2, 0, 2]), held_out.setting(skip=(0, 2), base=10_000, eps=1e-5)]
    assert same[0] == same[1] == {"skip": (0, 2), "positions": True, "pairing": "halves", "base": 10000.0,
                                  "norm": "rms", "eps": 1e-5}
    # without positions, the RoPE pairing and base change nothing, and are not part of the setting
    assert held_out.setting(positions=False, pairing="neighbours", base=123.0) == held_out.setting(positions=False)
    assert json.dumps(held_out.setting(), sort_keys=True) == held_out.json_key(held_out.setting())


def test_the_file_is_served_beside_the_weights():
    from tools.wheel import served_files

    assert "precomputed.npz" in {path.name for path in served_files().values()}
    assert model.FOLDER / precomputed.FILE == files.FOLDER / "precomputed.npz"
    assert (files.FOLDER / "precomputed.npz").stat().st_size < 1.4e6       # 1.31 MB, the heads lab's maps 0.27 MB of it


# ---------------------------------------------------------------- notebook 04's store (labs/decoder/precomputed.npz)

def test_notebook_04s_file_holds_its_run_for_todays_source():
    from labs.decoder import near_identity, precomputed as decoder

    shipped = decoder.STORE.shipped()
    assert [name for name, _kwargs in shipped] == ["labs.decoder.near_identity._start_of_training"]
    assert shipped[0][1] == near_identity._plain(layers=12, d_model=768, d_ff=3072, heads=12, length=8, stream_rms=1,
                                                 std=0.02, rules=tuple(RULES), seed=0, dtype=np.float32)
    stored = decoder.STORE.stored()
    assert all(decoder.STORE.key(name, kwargs) in stored for name, kwargs in shipped) and len(stored) == 1, (
        "labs/decoder/precomputed.npz does not hold notebook 04's run for today's source of "
        f"{', '.join(decoder.sources())}: run `.venv/bin/python -m training.precomputed decoder`")


def notebook_04_differences() -> list:
    """The stored run of notebook 04 against a live one, as messages (none when they are equal)."""
    from labs.decoder import near_identity

    kwargs = near_identity._gpt2_small_start()[0]
    try:
        assert_same(near_identity._start_of_training(**kwargs), near_identity._start_of_training.live(**kwargs),
                    "notebook 04's start of training")
    except AssertionError as error:
        return [str(error)]
    return []


def test_notebook_04s_stored_run_equals_a_live_run():
    """The run lib.initialisation computes today (GPT-2 Small's size, about 3 s with one BLAS thread,
    in a fresh process as above) against the stored one."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "import json, test_precomputed as t; "
                           "print(json.dumps(t.notebook_04_differences()))"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    problems = json.loads(done.stdout.strip().splitlines()[-1])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("store, computed_by", [
    ("labs.decoder.precomputed", {"lib.initialisation", "lib.block", "lib.attention", "lib.ffn", "lib.norm",
                                  "labs.decoder.near_identity"}),
    ("labs.norms.precomputed", {"lib.block", "lib.attention", "lib.ffn", "lib.norm", "lib.weights",
                                "labs.norms.placement"}),
])
def test_a_stores_key_changes_with_the_source_of_what_computes_it(store, computed_by, tmp_path, monkeypatch):
    """Notebooks 04's and 03's stores: a change to any module that computes their results (for 04
    lib.initialisation, lib.block and what the block runs; for 03 lib.block, what it runs and
    lib.weights) changes the key: the stored result is then a miss, computed live, and the test of
    the store's file fails until the file is written again."""
    import importlib

    module = importlib.import_module(store)
    sources = module.sources()
    assert set(sources) == computed_by
    assert all(path.is_file() for path in sources.values())
    today = module.inputs_digest()
    assert module.inputs_digest.__wrapped__() == today
    for name, path in sources.items():
        changed = tmp_path / f"{name}.py"
        changed.write_bytes(path.read_bytes() + b"\n# changed\n")
        with monkeypatch.context() as patch:
            patch.setattr(module, "sources", lambda: {**sources, name: changed})
            assert module.inputs_digest.__wrapped__() != today, name


def test_notebook_04s_call_is_looked_up_and_any_other_runs_live(monkeypatch):
    from labs.decoder import near_identity
    from lib import initialisation

    calls = []
    run = initialisation.start_of_training
    monkeypatch.setattr(initialisation, "start_of_training", lambda **kw: calls.append(kw) or run(**kw))
    near_identity._start_of_training.cache_clear()
    try:
        runs = near_identity.start_of_training(layers=12, d_model=768, d_ff=3072, heads=12, length=8, dtype=np.float32)
        assert not calls and list(runs) == list(RULES)
        assert runs["zero"].changes.tolist() == [0.0] * 12 and len(runs["gpt2"].sizes) == 13
        small = near_identity.start_of_training(layers=2, d_model=16, d_ff=64, heads=2, length=4, rules=("gpt2",))
        assert len(calls) == 1 and list(small) == ["gpt2"]
        assert_same(small["gpt2"]._asdict(), run(layers=2, d_model=16, d_ff=64, heads=2, length=4,
                                                 rules=("gpt2",))["gpt2"]._asdict(), "a small live run")
    finally:
        near_identity._start_of_training.cache_clear()


def test_notebook_04s_file_is_in_the_course_wheel():
    from tools.wheel import source_files

    assert "labs/decoder/precomputed.npz" in source_files()
    assert (ROOT / "labs" / "decoder" / "precomputed.npz").stat().st_size < 10_000


# ---------------------------------------------------------------- notebook 03's store (lib/trained/placement_stacks.npz)

def test_notebook_03s_file_holds_its_50_stacks_for_todays_source():
    from labs.norms import placement, precomputed as norms

    shipped = norms.STORE.shipped()
    assert shipped == [("labs.norms.placement._many_stacks", {"depth": 48, "count": 50})]
    assert (placement.STACKS_DEPTH, placement.STACKS) == (48, 50)
    stored = norms.STORE.stored()
    assert norms.STORE.key(*shipped[0]) in stored and len(stored) == 1, (
        "lib/trained/placement_stacks.npz does not hold notebook 03's 50 stacks for today's source of "
        f"{', '.join(norms.sources())}: run `.venv/bin/python -m training.precomputed norms`")


def test_notebook_03s_stored_stacks_equal_a_live_run():
    """All 50 stacks computed again (about a second) against the stored ones, and what
    ``many_stacks`` returns against ``lib.block``'s experiment itself for three of them."""
    from labs.norms import many_stacks, placement
    from lib.block import norm_placement_experiment

    stored = placement._many_stacks(depth=48, count=50)
    assert_same(stored, placement._many_stacks.live(depth=48, count=50), "notebook 03's 50 stacks")
    found = many_stacks(48, 50)
    for index, seed in ((0, 100), (1, 200), (49, 5000)):
        run = norm_placement_experiment(48, seed=seed)
        for name in ("pre", "post"):
            np.testing.assert_array_equal(found[name]["gaps"][index], run[name].gaps)
            assert found[name]["amplification"][index] == run[name].amplification


def test_notebook_03s_call_is_looked_up_and_any_other_runs_live(monkeypatch):
    from labs.norms import many_stacks, placement

    calls = []
    run = placement.norm_placement_experiment
    monkeypatch.setattr(placement, "norm_placement_experiment", lambda *a, **kw: calls.append(kw) or run(*a, **kw))
    placement._many_stacks.cache_clear()
    try:
        assert many_stacks(48, 50)["pre"]["gaps"].shape == (50, 49) and not calls
        small = many_stacks(6, 2)
        assert len(calls) == 2 and small["post"]["gaps"].shape == (2, 7)
    finally:
        placement._many_stacks.cache_clear()


def test_notebook_03s_file_is_served_beside_the_wheel_not_in_it():
    """40 kB that only notebook 03 reads: the site serves it beside the wheel (lib.files fetches
    it the first time), so notebook 00's preload does not carry it."""
    from tools.wheel import served_files, source_files

    assert not [name for name in source_files() if name.endswith("placement_stacks.npz")]
    assert (ROOT / "lib" / "trained" / "placement_stacks.npz") in served_files().values()
    assert (ROOT / "lib" / "trained" / "placement_stacks.npz").stat().st_size < 50_000
