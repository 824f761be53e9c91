"""lib.deprecated: the weights' earlier names (W1, W2, b1, b2, attention_norm, ffn_norm,
final_norm) and lib.params.REAL_MODELS still answer, for notebooks saved from earlier releases,
and nothing else changes."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lib.block import BlockWeights, block, random_block_weights
from lib.deprecated.names import RENAMED
from lib.ffn import worked_example

ROOT = Path(__file__).resolve().parent.parent
E = np.eye(2)


def test_block_weights_take_the_earlier_keywords():
    e = worked_example()
    old = BlockWeights(E, E, E, E, W1=e.W_up, W2=e.W_down, b1=e.b_up, b2=e.b_down)
    new = BlockWeights(E, E, E, E, W_up=e.W_up, W_down=e.W_down, b_up=e.b_up, b_down=e.b_down)
    for field in ("W_up", "W_down", "b_up", "b_down"):
        assert np.array_equal(getattr(old, field), getattr(new, field))
    x = np.array([[0.0, 4.0]])
    assert np.array_equal(block(x, old, norm="layer", activation="relu"), block(x, new, norm="layer", activation="relu"))


def test_block_weights_read_and_assign_the_earlier_names():
    w = random_block_weights(4, 8, seed=0, scale=0.5)
    assert w.W1 is w.W_up and w.W2 is w.W_down and w.b1 is None and w.attention_norm is None
    gain = np.full(4, 2.0)
    w.ffn_norm = gain
    assert w.ffn_norm_gain is gain and w.ffn_norm is gain and "ffn_norm" not in vars(w)


def test_an_earlier_name_and_its_new_name_together_are_refused():
    with pytest.raises(TypeError, match="give W_up or its earlier name W1, not both"):
        BlockWeights(E, E, E, E, W_up=E, W1=E, W_down=E)


def test_names_that_never_existed_still_raise_attribute_error():
    w = random_block_weights(4, 8, seed=0, scale=0.5)
    with pytest.raises(AttributeError, match="'BlockWeights' object has no attribute 'W3'"):
        w.W3
    with pytest.raises(AttributeError, match="final_norm"):
        w.final_norm                                    # an earlier name, but not of a block's field
    with pytest.raises(AttributeError, match="gamma"):
        worked_example().gamma


def test_the_worked_example_and_the_trained_weights_answer_to_the_earlier_names():
    e = worked_example()
    assert (e.W1, e.b1, e.W2, e.b2) == (e.W_up, e.b_up, e.W_down, e.b_down)
    from lib import model

    w = model.weights()
    assert w.final_norm is w.final_norm_gain and w.blocks[0].attention_norm is w.blocks[0].attention_norm_gain


def test_every_earlier_name_maps_to_a_field_of_some_class_that_answers_to_it():
    from lib import model

    fields = set(BlockWeights.__dataclass_fields__) | set(worked_example()._fields) | set(model.Weights._fields)
    assert set(RENAMED.values()) <= fields and not set(RENAMED) & fields


def test_lib_params_still_gives_the_published_models_that_moved_to_the_calculator():
    import lib.params
    from labs.decoder.models import REAL_MODELS

    assert lib.params.REAL_MODELS is REAL_MODELS
    namespace = {}
    exec("from lib.params import REAL_MODELS, ModelConfig", namespace)
    assert namespace["REAL_MODELS"] is REAL_MODELS
    with pytest.raises(AttributeError, match="module 'lib.params' has no attribute 'presets'"):
        lib.params.presets


def test_the_library_imports_no_lab_until_a_moved_name_is_asked_for():
    script = ("import sys, lib.params, lib.model, lib.block, lib.ffn\n"
              "assert not [m for m in sys.modules if m.split('.')[0] == 'labs'], 'labs imported'\n"
              "lib.params.REAL_MODELS\n"
              "assert 'labs.decoder.models' in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr[-2000:]
