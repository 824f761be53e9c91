"""Labs write numbers only through presentation (labs/README.md): no module in labs/ chooses
decimals, a percent sign, thousands separators or a power of ten itself.

The scan reads each module's syntax tree and reports:
- a format spec in an f-string (``f"{x:.2f}"``, ``f"{n:,}"``, ``f"{share:.0%}"``, even ``f"{x:g}"``);
- %-formatting of a string (``"%.2f" % x``), ``str.format`` and ``format()``;
- ``round()`` (or NumPy's) inside an f-string, joined to a string or written with ``str()``, and
  ``str()`` of a float;
- NumPy's own number printing (``array2string``, ``printoptions``, ``format_float_...``);
- a matplotlib number formatter (``PercentFormatter``, ``StrMethodFormatter``, ...): a tick label
  is written with presentation (``FuncFormatter`` or fixed labels) instead;
- a slider's ``readout_format`` given as a literal spec instead of ``engine.presentation.numbers.readout``.

A whole number that counts something (a layer, a position, a block) may be interpolated as it
is, ``f"{n} layers"``: that is how ``count`` writes it below 1,000, and the scan cannot tell it
from text. ``round()`` used for arithmetic (a cache key, an axis limit) is not writing.

An exception is allowed only when it is listed in EXCEPTIONS below with its reason, and the
line itself carries a comment that starts with ``# number written here:``; nothing is allowed
silently.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAB_MODULES = sorted(p for p in (ROOT / "labs").rglob("*.py") if "__pycache__" not in p.parts)

# (module path, the flagged line as written, stripped) -> why the lab writes that number itself.
EXCEPTIONS: dict[tuple[str, str], str] = {}
EXCEPTION_COMMENT = "# number written here:"

ROUNDING = {"round", "around"}
NUMPY_PRINTING = {"array2string", "array_str", "array_repr", "format_float_positional",
                  "format_float_scientific", "printoptions", "set_printoptions"}
MATPLOTLIB_FORMATTERS = {"PercentFormatter", "StrMethodFormatter", "FormatStrFormatter", "ScalarFormatter",
                         "EngFormatter", "LogFormatter", "LogFormatterSciNotation", "LogFormatterExponent",
                         "LogFormatterMathtext"}


def _name(func) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _rounds(node) -> bool:
    return any(isinstance(n, ast.Call) and _name(n.func) in ROUNDING for n in ast.walk(node))


def _text(node) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _a_float(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    return isinstance(node, ast.Call) and _name(node.func) in ({"float"} | ROUNDING)


def number_formatting(source: str) -> list[tuple[int, str]]:
    """(line, what) of every place ``source`` writes a number itself, in line order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        what = None
        if isinstance(node, ast.FormattedValue):
            if node.format_spec is not None:
                what = "a format spec in an f-string"
            elif _rounds(node.value):
                what = "round() in an f-string"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _text(node.left):
            what = "%-formatting"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
                (_text(node.left) and _rounds(node.right)) or (_text(node.right) and _rounds(node.left))):
            what = "round() joined to text"
        elif isinstance(node, ast.Call):
            name = _name(node.func)
            if name == "format":
                what = "str.format" if isinstance(node.func, ast.Attribute) else "format()"
            elif name in ("str", "repr") and node.args and (_a_float(node.args[0]) or _rounds(node.args[0])):
                what = "str() of a float or a rounded number"
            elif name in NUMPY_PRINTING:
                what = "NumPy's number printing"
            elif name in MATPLOTLIB_FORMATTERS:
                what = "a matplotlib number formatter"
            for keyword in node.keywords:
                if keyword.arg == "readout_format" and _text(keyword.value):
                    found.append((keyword.value.lineno, "a literal slider readout format"))
        if what:
            found.append((node.lineno, what))
    return sorted(found)


def problems(module: str, source: str, exceptions: dict) -> list[str]:
    """What is wrong in ``source`` (the module ``module``, e.g. "labs/ffn/router.py"): each number
    it writes itself that ``exceptions`` does not excuse, each listed exception whose line lacks
    its comment, and each listed exception that no longer writes a number."""
    lines = source.splitlines()
    sites = number_formatting(source)
    wrong = []
    for line, what in sites:
        text = lines[line - 1].strip()
        reason = exceptions.get((module, text))
        if reason is None:
            wrong.append(f"line {line}: {what}: {text}")
        elif not reason.strip() or EXCEPTION_COMMENT not in text:
            wrong.append(f"line {line}: an exception needs its reason here and a comment "
                         f"{EXCEPTION_COMMENT!r} on its line: {text}")
    written = {lines[line - 1].strip() for line, _what in sites}
    wrong += [f"the exception {text!r} writes no number any more: remove it"
              for (listed, text) in exceptions if listed == module and text not in written]
    return wrong


def _label(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", LAB_MODULES, ids=_label)
def test_the_lab_module_writes_no_number_itself(path):
    wrong = problems(_label(path), path.read_text(encoding="utf-8"), EXCEPTIONS)
    assert wrong == [], ("write these numbers with engine.presentation.numbers (fixed, percentage, count, "
                         "significant, scientific, readout, ...):\n" + "\n".join(wrong))


def test_an_exception_counts_only_when_listed_with_its_reason_and_commented_on_its_line():
    module = "labs/example.py"
    commented = 'label = f"{x:.2f}"  # number written here: the reason'
    source = f"{commented}\nother = f'{{y:.1f}}'\n"
    assert problems(module, source, {(module, commented): "the reason"}) == [
        "line 2: a format spec in an f-string: other = f'{y:.1f}'"]
    bare = 'label = f"{x:.2f}"'
    assert "a comment" in problems(module, bare, {(module, bare): "the reason"})[0]
    assert "needs its reason" in problems(module, commented, {(module, commented): " "})[0]
    stale = problems(module, "label = fixed(x)", {(module, commented): "the reason"})
    assert stale == [f"the exception {commented!r} writes no number any more: remove it"]


@pytest.mark.parametrize("source, what", [
    ('t = f"{x:.2f}"', "a format spec in an f-string"),
    ('t = f"{n:,} tokens"', "a format spec in an f-string"),
    ('t = f"{share:.0%} of it"', "a format spec in an f-string"),
    ('t = f"{x:g}"', "a format spec in an f-string"),
    ('t = f"{round(x, 2)}"', "round() in an f-string"),
    ('t = f"{np.round(x, 2)} wide"', "round() in an f-string"),
    ('t = "%.2f" % x', "%-formatting"),
    ('t = "{:.1f}".format(x)', "str.format"),
    ('t = format(x, ".3g")', "format()"),
    ('t = "size " + str(round(x, 1))', "round() joined to text"),
    ('t = str(round(x, 1))', "str() of a float or a rounded number"),
    ('t = str(float(x))', "str() of a float or a rounded number"),
    ('t = np.array2string(a, precision=2)', "NumPy's number printing"),
    ('ax.yaxis.set_major_formatter(PercentFormatter(1.0))', "a matplotlib number formatter"),
    ('s = FloatSlider(readout_format=".2f")', "a literal slider readout format"),
])
def test_the_scan_finds_each_way_of_writing_a_number(source, what):
    assert what in [kind for _line, kind in number_formatting(source)]


@pytest.mark.parametrize("source", [
    't = f"{fixed(x)} and {percentage(share, 1)} of {count(n)}"',
    't = f"after {n} layers, block {i + 1}"',
    'd_ff = int(round(multiple * d))',
    'key = _balanced(round(strength, 6), steps)',
    's = FloatSlider(readout_format=readout(2))',
    'ax.yaxis.set_major_formatter(FuncFormatter(lambda share, _position: percentage(share)))',
    't = f"{name!r} is {word}"',
])
def test_the_scan_leaves_presentation_calls_counts_and_arithmetic_alone(source):
    assert number_formatting(source) == []
