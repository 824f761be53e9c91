"""What a check found, as plain data: :class:`Feedback`, its kind (one of :data:`HEADLINES`), the
details in words, the hint that matches a known mistake or a problem, and what the code was seen
to do right. :mod:`engine.core.checker` makes it; :mod:`engine.ui.feedback` shows it."""

from __future__ import annotations

from dataclasses import dataclass, field

# Headline per feedback kind.
HEADLINES = {
    "pass": "Passed",
    "blank": "Not attempted yet",
    "missing": "Not attempted yet",
    "error": "Your code raised an error",
    "none": "Your function returned None",
    "type": "Wrong type",
    "shape": "Wrong shape",
    "nan": "NaN or infinity in the result",
    "values": "Wrong values",
    "inplace": "Your function changed its input",
    "state": "Your function's results depend on earlier calls",
    "timeout": "Your function did not finish",
    "condition": "Right numbers, but not as the exercise asks",
    "recursion": "Your function kept calling itself",
    "memory": "Your function asked for too much memory",
}

EARLIER = "Passed before this kernel started"

# What a hint of the ladder shown with a miss is: the exercise's next hint, in order, whatever the
# code did; not a reading of the code (that is the feedback above it).
LADDER_NOTE = "the exercise's next hint on the method, not a reading of your code"


@dataclass
class Feedback:
    """What a check found. ``kind`` is one of :data:`HEADLINES`' keys."""

    exercise: str
    kind: str
    details: list[str] = field(default_factory=list)
    hint: str | None = None  # the hint matching a known mistake or problem
    ladder: tuple[int, int, str] | None = None  # (level, of, text) from the hint ladder
    location: str | None = None  # "line 3: return x.sum()" in the learner's code
    cases: int = 0
    right: tuple = ()  # what the code was seen to do right ("shape"): no generic hint about it
    earlier: bool = False  # "missing" in this kernel, though the progress says it passed before

    @property
    def passed(self) -> bool:
        return self.kind == "pass"

    @property
    def attempted(self) -> bool:
        return self.kind not in ("blank", "missing")

    @property
    def status(self) -> str:
        """"pass", "fail" (attempted, not passed) or "blank" (not attempted)."""
        if self.passed or self.earlier:
            return "pass"
        return "fail" if self.attempted else "blank"

    @property
    def headline(self) -> str:
        return EARLIER if self.earlier else HEADLINES.get(self.kind, self.kind)

    def text(self) -> str:
        mark = {"pass": "[passed]", "fail": "[not yet]", "blank": "[not attempted]"}[self.status]
        lines = [f"{mark} {self.exercise}: {self.headline}"]
        lines += [f"  - {d}" for d in self.details]
        if self.location:
            lines.append(f"  - where: {self.location}")
        if self.hint:
            lines.append(f"  Hint: {self.hint}")
        if self.ladder:
            level, total, text = self.ladder
            lines.append(f"  Hint {level} of {total} ({LADDER_NOTE}): {text}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

