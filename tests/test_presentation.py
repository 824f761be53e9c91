"""presentation: the number formats say what their docstring says, and write a number as Python's
format specs do (so a lab that moved from ``f"{x:.2f}"`` to ``fixed(x)`` shows the same text),
except that they never write a negative zero; the HTML and table pieces escape what they are given."""

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from engine.presentation import html, numbers, tables

EXAMPLE = re.compile(r'(\w+\((?:[^()"]|"[^"]*"|\([^()]*\))*\)) -> ("(?:[^"\\]|\\.)*")')
SOURCE = Path(numbers.__file__).read_text(encoding="utf-8")
EXAMPLES = EXAMPLE.findall(ast.get_source_segment(SOURCE, ast.parse(SOURCE).body[0]))


def test_the_module_docstring_shows_every_function():
    shown = {call.split("(")[0] for call, _ in EXAMPLES}
    public = {name for name, value in vars(numbers).items() if callable(value) and not name.startswith("_")
              and getattr(value, "__module__", "") == numbers.__name__}
    assert len(EXAMPLES) >= 25 and shown == public


@pytest.mark.parametrize("call, expected", EXAMPLES, ids=[call for call, _ in EXAMPLES])
def test_the_docstring_example_is_what_the_function_gives(call, expected):
    assert eval(call, vars(numbers)) == eval(expected)


def _without_negative_zero(text: str) -> str:
    """Python's own spec writes -0.00 for a tiny negative number; the course writes 0.00."""
    return re.sub(r"^-(?=[0.,]+(e[-+]\d+)?%?$)", "", text)


FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.floats(min_value=-2.0, max_value=2.0),
                   st.integers(-10 ** 7, 10 ** 7).map(lambda n: n / 1000))


@settings(max_examples=400, deadline=None)
@given(FLOATS, st.integers(0, 4))
def test_fixed_and_percentage_write_what_the_format_specs_write(value, digits):
    assert numbers.fixed(value, digits) == _without_negative_zero(f"{value:.{digits}f}")
    assert numbers.fixed(value, digits, grouped=True) == _without_negative_zero(f"{value:,.{digits}f}")
    signed = f"{value:+.{digits}f}"
    assert numbers.fixed(value, digits, signed=True) == (
        "+" + signed[1:] if re.fullmatch(r"-[0.]+", signed) else signed)
    assert numbers.percentage(value, digits) == _without_negative_zero(f"{value:.{digits}%}")


@settings(max_examples=400, deadline=None)
@given(FLOATS, st.integers(0, 6))
def test_significant_and_scientific_write_what_the_format_specs_write(value, digits):
    assert numbers.significant(value, digits or 1) == f"{value:.{digits or 1}g}"
    assert numbers.scientific(value, digits) == f"{value:.{digits}e}"


def test_a_tiny_share_is_written_as_a_bound_only_when_asked():
    assert numbers.percentage(0.0004, 1) == "0.0%" and numbers.percentage(-0.0004, 1) == "0.0%"
    assert numbers.percentage(0.0004, 1, floor=True) == "<0.1%"
    assert numbers.percentage(0.001, 1, floor=True) == "0.1%" and numbers.percentage(0, 1, floor=True) == "0.0%"
    assert numbers.percentage(0.004, floor=True) == "<1%"


def test_the_pieces_escape_text_and_tables_keep_their_cells_in_order():
    assert html.plain("<b> & co") == f'<div style="{html.TEXT}">&lt;b&gt; &amp; co</div>'
    table = tables.table([("x < y", "1,024")], header=("what", "value"))
    assert table.index("what") < table.index("value") < table.index("x &lt; y") < table.index("1,024")
    assert '<th scope="col"' in table and "course-numbers" in table
    row = tables.ruled_row([tables.ruled_cell("<i>safe</i>", colspan=2)], "r", data={"notebook": "0\"1"})
    assert 'colspan="2"' in row and 'data-notebook="0&quot;1"' in row and "<i>safe</i>" in row
