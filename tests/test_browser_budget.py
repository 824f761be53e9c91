"""The time budget of a check in the browser's own kernel: Pyodide in a real Chromium, where
there are no signals and no threads to stop runaway code (engine/core/budget.py).

The self-hosted site's Pyodide is the bare core (no NumPy), which is why the budget is plain
Python: the learner's loop here is plain Python too. Pyodide's Python has sys.monitoring, so
the loops that catch the stop (tests/test_check_budget.py's SWALLOWING) are stopped by it.
"""

import json

from test_browser_site import run_in_repl, watch
from test_check_budget import SWALLOWING

FOREVER = """\
import time
from engine.core.budget import Budget, OutOfTime

def forever():
    n = 0
    while True:
        n += 1

started = time.monotonic()
try:
    Budget(per_call=1.0).call(forever)
except OutOfTime as stop:
    print('stopped:', stop, 'after', round(time.monotonic() - started, 1), 's')
"""

RECURSION = """\
def again(n):
    return again(n + 1)

try:
    Budget(per_call=5.0).call(again, 0)
except RecursionError:
    print('recursion stopped; limit back to', sys.getrecursionlimit() == limit)
"""


# Each loop that catches the stop, run 5 times with a budget of 0.3 s: "stopped" when the
# budget's stop ended the call within 2 s.
SWALLOWED = """\
import json
print("monitoring:", hasattr(sys, "monitoring"))
for name, source in json.loads(%r).items():
    namespace = {}
    exec(compile(source, f"<cell {name}>", "exec"), namespace)
    runs = []
    for _ in range(5):
        started = time.monotonic()
        try:
            Budget(per_call=0.3).call(namespace["row_mean"], [1.0, 2.0])
            runs.append("returned")
        except OutOfTime:
            runs.append("stopped" if time.monotonic() - started < 2 else "late")
        except BaseException as error:
            runs.append(type(error).__name__)
    print("loop", name, "->", *runs)
""" % json.dumps({name: source.replace("x.sum()", "sum(x)") for name, source in SWALLOWING.items()})


def test_a_loop_that_never_ends_stops_in_pyodide_and_the_next_cell_runs(self_hosted_site, serve_site, browser):
    site, _ = self_hosted_site
    base = serve_site(site, "/budget/")
    context = browser.new_context()
    try:
        page = context.new_page()
        record = watch(page)
        text = run_in_repl(page, base, [
            "import sys\nlimit = sys.getrecursionlimit()",
            FOREVER,
            "print('the next cell runs:', 6 * 7)",
            RECURSION,
            "print('and the next:', sys.gettrace() is None)",
            SWALLOWED,
            "print('after the loops:', 6 * 7, sys.gettrace() is None)",
        ])
        assert "stopped: did not finish in 1 s after 1." in text, text
        assert "the next cell runs: 42" in text, text
        assert "recursion stopped; limit back to True" in text, text
        assert "and the next: True" in text, text
        assert "monitoring: True" in text, text
        for name in SWALLOWING:
            assert f"loop {name} -> " + " ".join(["stopped"] * 5) in text, (name, text)
        assert "after the loops: 42 True" in text, text
        assert record["outside"] == []
    finally:
        context.close()
