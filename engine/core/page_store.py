"""The progress record kept in the browser's own storage, where the kernel has no drive.

In JupyterLite the kernel reaches the learner's files (``/drive``) through the site's service
worker, and browsers run service workers only in a *secure context*: an ``https://`` address,
or this computer's own (``localhost``, ``127.0.0.1``). A site served over plain HTTP at any
other address (``./course serve --host 0.0.0.0`` in a classroom, a school's web server) gives
the kernel no ``/drive``: its files live in memory and are gone when the page reloads.

There, the progress record is also kept in the browser's IndexedDB, which needs no secure
context: one record per site (its address, up to JupyterLite's ``extensions/`` folder), in the
database named after the course (:func:`database`). The kernel runs in a web worker of the page, with the same storage.

- Every save merges the record into the stored one, in one IndexedDB transaction, and takes
  the merge back (:func:`mirror`): the better entry of each exercise, the newer of each answer,
  so notebooks open side by side add up instead of overwriting each other. A reset or a
  replacing import writes the record as it is.
- The first load in a kernel does the same with the record it has (empty in a new kernel),
  which brings back what was stored: a restore.

IndexedDB answers asynchronously and the kernel cannot wait for it, so a restore lands a
moment after the cell that started it (the setup cell), before the learner's next cell in
practice; a save made before it lands is merged, never lost. :func:`state` says how it went
(``"off"``, ``"pending"``, ``"kept"``, ``"failed"``), and :func:`on_change` calls back when
it changes. Where storage is blocked (some private windows, a browser set to keep no site
data) the record lasts until the page reloads, and :data:`FAILED` says so.

Plain Python; the browser's objects (``js``, ``pyodide``) are imported only in the browser.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .course import current
from .workspace import in_browser_drive

STORE = "progress"

FAILED = ("This browser cannot keep your progress for this site ({reason}), so it lasts only "
          "until the page is reloaded. Open the course in a normal (not private) window of a "
          "browser that lets sites keep data; until then, export your progress before you close "
          "this tab (00 Start here, Your progress) and import it later.")
KEPT = ("This site is served over plain http://, so Python here cannot open your saved "
        "notebooks; your progress is kept in this browser's storage for this site instead, and "
        "survives a reload (a private window forgets it when closed).")
KEPT_SECURE = ("This browser gives this page no service worker (some private windows do not), so "
               "Python here cannot open your saved notebooks; your progress is kept in this "
               "browser's storage for this site instead, until the window is closed.")

# secure: whether the page has a secure context (then the drive is missing for another reason)
_state = {"state": "off", "reason": "", "secure": False}
_listeners: list = []
_started = False
_sync = None            # the JavaScript function that merges a record into the store


def database() -> str:
    """The name of the browser's database that keeps the record: the course's name
    ("transformer-course")."""
    return current().name


def needed() -> bool:
    """True in a browser kernel with no drive, and no progress file named by the environment."""
    return (sys.platform == "emscripten" and not in_browser_drive()
            and not os.environ.get("COURSE_PROGRESS_FILE"))


def state() -> dict:
    """``{"state": "off" | "pending" | "kept" | "failed", "reason": str, "secure": bool}``."""
    return dict(_state)


def message(current: dict | None = None) -> str:
    """What the learner is told in a state (by default the present one): :data:`KEPT` (or
    :data:`KEPT_SECURE`), :data:`FAILED` with its reason, or ``""``."""
    current = _state if current is None else current
    if current.get("state") == "kept":
        return KEPT_SECURE if current.get("secure") else KEPT
    if current.get("state") == "failed":
        return FAILED.format(reason=current.get("reason") or "its storage is blocked")
    return ""


def on_change(callback) -> None:
    """Call ``callback(state())`` whenever the state changes (and once now)."""
    _listeners.append(callback)
    callback(state())


def _set(name: str, reason: str = "") -> None:
    if (_state["state"], _state["reason"]) == (name, reason):
        return
    _state.update(state=name, reason=reason)
    for callback in list(_listeners):
        try:
            callback(state())
        except Exception:  # noqa: BLE001 - a view's problem must not stop the progress
            pass


def _script() -> str:
    """The page's side of the store (``page_store.js``, beside this module)."""
    return Path(__file__).with_name("page_store.js").read_text(encoding="utf-8")


def site_key() -> str:
    """The site's address: the kernel's worker address up to JupyterLite's ``extensions/``."""
    import js  # noqa: PLC0415 - only in the browser

    href = str(js.location.href)
    return href.split("/extensions/")[0] + "/" if "/extensions/" in href else str(js.location.origin) + "/"


def _reason(error) -> str:
    name = str(getattr(error, "name", "") or type(error).__name__)
    if name in ("SecurityError", "InvalidStateError", "UnknownError", "QuotaExceededError"):
        return "its storage is blocked: a private window, or a browser set to keep no site data"
    return f"{name}: {getattr(error, 'message', '') or error}"


def mirror(data: dict, merge, settle, replace: bool = False) -> None:
    """Merge ``data`` into the stored record (or, with ``replace``, store it as it is), then call
    ``settle(merged)`` with what is stored now. ``merge(stored, mine)`` merges two records (dicts),
    ``mine`` winning where they disagree. Does nothing unless :func:`needed`; never raises."""
    global _sync, _started
    if not needed():
        return
    _started = True
    if _state["state"] == "off":
        _set("pending")
    try:
        from pyodide.code import run_js  # noqa: PLC0415 - only in the browser
        from pyodide.ffi import create_proxy  # noqa: PLC0415

        if _sync is None:
            import js  # noqa: PLC0415

            _state["secure"] = bool(getattr(js, "isSecureContext", False))
            _sync = (run_js(_script()), create_proxy(_merge_text(merge)))
        function, merger = _sync
        promise = function(database(), STORE, site_key(), json.dumps(data, sort_keys=True), merger, replace)
    except Exception as error:  # noqa: BLE001 - storage refused at once
        _set("failed", _reason(error))
        return

    def stored(text) -> None:
        try:
            settle(json.loads(str(text)))
        except ValueError:
            pass
        _set("kept")

    promise.then(stored, lambda error: _set("failed", _reason(error)))


def restore(data: dict, merge, settle) -> None:
    """Once per kernel: merge what this kernel holds into the stored record and take the merge
    back (:func:`mirror`), which brings back what an earlier page stored."""
    if not _started:
        mirror(data, merge, settle)


def _merge_text(merge):
    def merged(stored: str, mine: str) -> str:
        try:
            old = json.loads(str(stored))
        except ValueError:
            return str(mine)
        return json.dumps(merge(old, json.loads(str(mine))), sort_keys=True)
    return merged


__all__ = ["FAILED", "KEPT", "KEPT_SECURE", "STORE", "database", "message", "mirror", "needed", "on_change", "restore",
           "site_key", "state"]
