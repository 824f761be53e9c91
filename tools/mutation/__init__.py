"""Mutation testing, one engine for lib and for the exercise checks: would the tests notice if
the code were a little wrong?

    ./course mutate                       # every lib/ module against its own test file
    ./course mutate norm ffn              # some modules only  (or: python -m tools.mutate norm ffn)
    ./course mutate exercises.definitions.norms   # that module's reference functions, scored
    ./course mutate --exercises           # also every definitions (and retired) module's references (report only)
    ./course mutate --solutions           # every exercise's solution against its check's fixed cases
    ./course mutate --solutions row-mean  # one exercise's (--list prints its mutants)
    ./course mutate --list norm           # print norm's mutants, run nothing
    ./course mutate --report survivors.md --json results.json --min-score 95

A mutant is one small edit of a source (:func:`mutants`): a byte range replaced, so it keeps the
code's formatting, with an id that stays the same when other lines move. One finder makes them,
with one of two sets of edits (:class:`Edits`): ``LIBRARY``, the slips a programmer makes
(operators, comparisons, constants, axes, a dropped keyword or statement...), and ``SOLUTION``,
those and the slips a learner makes in an exercise (a term left out, a sibling function, another
variable, the other axis, a result written into an argument...). Two ways to run them:

- a module against its test file (lib/X.py against tests/test_lib_X.py, else tests/test_X.py;
  --tests X=FILE to choose): pytest in forked children, each in its own copy of the repository;
  a mutant is killed when a test fails, errors or times out;
- an exercise's solution against its check's fixed cases, in this process (:func:`judge`); a
  mutant is killed when the check rejects it. tests/test_check_mutants.py requires all of them.

Mutants listed in tools/equivalent-mutants.txt (``ID  reason``) change no behaviour and are left
out of the score: killed / (mutants - equivalent). Forking needs a POSIX system.
"""
