"""Fetching a file the course site serves beside the course wheel, from the browser's kernel.

The site build serves the trained model's arrays as files of their own next to the course wheel,
in the folder of the site's Pyodide lock file (``static/pyodide-lock/``), and ``lib.files`` asks
for them through :func:`fetch`, which ``pyproject.toml`` declares as the entry point
``transformer_course.fetch``. It is the only code of the engine that talks to the browser.

The kernel runs in a web worker, where a request may wait for its answer, so the bytes are read
with a synchronous ``XMLHttpRequest`` (an array buffer): ``lib.model.weights()`` stays an
ordinary function, in new notebooks and in notebooks saved from earlier releases alike. The
address is the file's name against the folder Pyodide loaded its lock file from
(``pyodide.lockfileBaseUrl``), so a site served from a sub-path, or self-hosted with no
internet, serves them as it serves the wheel.
"""

from __future__ import annotations


def url(name: str) -> str:
    """The address of the served file ``name``: in the folder of the kernel's Pyodide lock file."""
    import js                   # Pyodide's modules: only the browser's kernel has them
    import pyodide_js

    base = pyodide_js.lockfileBaseUrl
    if not base:
        raise OSError("this Pyodide was started without a lock file, so the course site's files cannot be found")
    return js.URL.new(name, base).href


def fetch(name: str) -> bytes:
    """The bytes of the file ``name`` the course site serves beside the course wheel. Raises
    OSError, in words, when the kernel is not the browser's or the site does not answer with it."""
    try:
        import js
    except ImportError:
        raise OSError("only the course site's kernel (in the browser) can fetch the site's files") from None
    address = url(name)
    request = js.XMLHttpRequest.new()
    request.open("GET", address, False)
    request.responseType = "arraybuffer"
    try:
        request.send()
    except Exception as error:  # noqa: BLE001 - the browser's network error, as a JsException
        raise OSError(f"the request for {address} failed ({error}); is the site reachable?") from None
    if request.status != 200:
        raise OSError(f"the site answered {request.status} {request.statusText} for {address}")
    return bytes(js.Uint8Array.new(request.response).to_py())


__all__ = ["fetch", "url"]
