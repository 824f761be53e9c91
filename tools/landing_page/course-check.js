// Can the course run in this browser? The checks the landing page shows, and the notice in
// JupyterLab (kernel-watch.js) repeats when Python does not start. No outside code.
//
// - python(config, root): can Python (Pyodide) and the packages the notebooks need be loaded from
//   where this site says they are? The kernel reads the same settings (jupyter-lite.json): its
//   pyodideUrl (or the CDN by default) and the lock file that names each package's file. Each file
//   is asked for its first bytes only, which must be what such a file starts with (a WebAssembly
//   module, a zip archive, a script rather than a web page), and for a file of this site, be as
//   long as the build wrote down (config.sizes, read from the answer's Content-Range): a file
//   that is missing, empty, cut short by a copy, or replaced by a host's error page is found, not
//   taken for ready.
// - work(): can this browser keep the learner's work for this site? Site storage (IndexedDB)
//   must open; without a secure context (plain http:// at an address other than this
//   computer's own) the kernel has no drive, and the course keeps progress in that storage. It
//   asks the browser to keep the site's data for good (navigator.storage.persist()); where the
//   browser will not (a private window, or a site it does not know well), it says the work may
//   not last and reminds the learner to export it.
// Each returns {kind: "ok" | "problem", parts: [headline, sentences...]}, and pythonStarts: true
// for a problem that lets Python start but stops the notebooks (a package missing or damaged),
// stopsJupyterLab: true for one that stops JupyterLab itself (no site storage).
"use strict";

(function () {
  const TIMEOUT_MS = 15000;
  const MAGIC = {
    wasm: [0x00, 0x61, 0x73, 0x6d],                 // "\0asm"
    zip: [0x50, 0x4b, 0x03, 0x04],                  // "PK\3\4": .zip and .whl
  };

  function expected(url) {
    const name = url.pathname.split("/").pop();
    if (name.endsWith(".wasm")) return "wasm";
    if (name.endsWith(".zip") || name.endsWith(".whl")) return "zip";
    return "script";
  }

  function looksRight(kind, bytes) {
    if (!bytes.length) return false;
    if (kind === "script") {                          // not a host's HTML page in its place
      const start = new TextDecoder().decode(bytes).trimStart().toLowerCase();
      return !start.startsWith("<");
    }
    return MAGIC[kind].every((byte, i) => bytes[i] === byte);
  }

  function totalLength(response) {
    // The whole file's length: a range answer's Content-Range total, or a whole answer's length.
    const range = /\/(\d+)\s*$/.exec(response.headers.get("Content-Range") || "");
    if (range) return Number(range[1]);
    const length = response.headers.get("Content-Length");
    return response.status === 200 && length && !response.headers.get("Content-Encoding") ? Number(length) : null;
  }

  async function firstBytes(url, size) {
    // {ok: true} when the file answers with what it should start with (and, when the site says
    // how long it is, with that length); else {ok: false, why}.
    const control = new AbortController();
    const timer = setTimeout(() => control.abort(), TIMEOUT_MS);
    try {
      const response = await fetch(url, { cache: "no-store", signal: control.signal,
                                          headers: { Range: "bytes=0-15" } });
      if (response.status === 416) {                  // no first bytes to give: shorter than 16
        return { ok: false, why: totalLength(response) === 0 ? "empty" : "damaged" };
      }
      if (!response.ok) return { ok: false, why: "missing", status: response.status };
      const total = totalLength(response);
      if (size != null && total != null && total !== size) {
        response.body.cancel().catch(() => {});
        return { ok: false, why: "damaged" };          // cut short, or another file in its place
      }
      const reader = response.body.getReader();
      let bytes = new Uint8Array(0);
      while (bytes.length < 16) {
        const { done, value } = await reader.read();
        if (done) break;
        const joined = new Uint8Array(bytes.length + value.length);
        joined.set(bytes);
        joined.set(value, bytes.length);
        bytes = joined;
      }
      reader.cancel().catch(() => {});               // the rest is not needed
      return looksRight(expected(url), bytes) ? { ok: true } : { ok: false, why: bytes.length ? "damaged" : "empty" };
    } catch (error) {
      return { ok: false, why: error.name === "AbortError" ? "timeout" : "refused" };
    } finally {
      clearTimeout(timer);
    }
  }

  async function kernelSettings(config, root) {
    try {
      const response = await fetch(new URL("jupyter-lite.json", root), { cache: "no-store" });
      const lite = await response.json();
      return ((lite["jupyter-config-data"] || {}).litePluginSettings || {})[config.kernelSettings] || {};
    } catch (error) {
      return {};
    }
  }

  function unreachable(host, sameSite, results) {
    if (sameSite) {
      return ["Python cannot load: files of the Python runtime are missing or damaged on this site.",
        "What happened: the site was copied or built incompletely (" + results.join(", ") + ").",
        "What to do: ask your instructor to rebuild and copy the whole site again."];
    }
    if (results.some((r) => /(empty|damaged|missing)$/.test(r))) {
      return ["Python cannot load: " + host + " does not serve the files of the Python runtime this site names.",
        "What happened: " + results.join(", ") + ".",
        "What to do: tell your instructor; the site may need to be rebuilt."];
    }
    const timeout = results.some((r) => r.includes("timeout"));
    return ["Python cannot load, so the notebooks will not run in this browser.",
      "What happened: this browser could not " + (timeout ? "reach " + host + " in time" : "reach " + host) +
      ", where this site loads Python from. A school or company network may block it, or this " +
      "computer may be offline.",
      "What to do: try again on another network (for example at home), or ask your instructor " +
      "for the self-hosted version of the course, which loads everything from the course's own site."];
  }

  function sizeOf(config, root, url) {
    // The length the site's build wrote down for a file of the site (null: not known).
    const base = new URL(root).pathname;
    if (url.origin !== new URL(root).origin || !url.pathname.startsWith(base)) return null;
    const size = (config.sizes || {})[decodeURIComponent(url.pathname.slice(base.length))];
    return size === undefined ? null : size;
  }

  async function python(config, root) {
    const settings = await kernelSettings(config, root);
    const pyodideUrl = new URL(settings.pyodideUrl || config.defaultPyodideUrl, root);
    const sameSite = pyodideUrl.origin === window.location.origin;
    const runtime = ["pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]
      .map((name) => (name === "pyodide.mjs" ? pyodideUrl : new URL(name, pyodideUrl)));
    const runtimeAnswers = await Promise.all(runtime.map((url) => firstBytes(url, sizeOf(config, root, url))));
    const failed = runtimeAnswers.map((a, i) => (a.ok ? null : runtime[i].pathname.split("/").pop() + ": " + a.why))
      .filter(Boolean);
    if (failed.length) return { kind: "problem", parts: unreachable(pyodideUrl.host, sameSite, failed) };
    const options = settings.loadPyodideOptions || {};
    const lockUrl = options.lockFileURL ? new URL(options.lockFileURL, root) : new URL("pyodide-lock.json", pyodideUrl);
    let lock;
    try {
      lock = await (await fetch(lockUrl, { cache: "no-store" })).json();
    } catch (error) {
      return { kind: "problem", parts: ["Python cannot load: this site's list of Python packages is missing or damaged.",
        "What to do: ask your instructor to rebuild the site."] };
    }
    const packages = lock.packages || {};
    const answers = await Promise.all(config.needs.map((name) => {
      if (!packages[name]) return { ok: false, why: "missing" };
      const url = new URL(packages[name].file_name, lockUrl);
      return firstBytes(url, sizeOf(config, root, url));
    }));
    const spoilt = (answer) => answer.why === "empty" || answer.why === "damaged";
    const missing = config.needs.filter((name, i) => !answers[i].ok && !spoilt(answers[i]));
    const damaged = config.needs.filter((name, i) => spoilt(answers[i]));
    if (missing.length) {
      const core = missing.includes("numpy");
      return { kind: "problem", pythonStarts: true, parts: [
        "Python starts here, but the notebooks cannot run: " + missing.join(", ") +
          (missing.length === 1 ? " is" : " are") + " missing.",
        core && config.kind === "self-hosted"
          ? "What happened: this site was built with only the core of Pyodide (the Python runtime " +
            "for browsers), which holds none of the packages the notebooks need."
          : "What happened: the packages the notebooks need cannot be loaded from where this site says they are.",
        "What to do: ask your instructor to rebuild the site with the full Pyodide distribution."] };
    }
    if (damaged.length) {
      return { kind: "problem", pythonStarts: true, parts: [
        "Python starts here, but the notebooks cannot run: the file of " + damaged.join(", ") +
          " on this site is empty or damaged.",
        "What happened: the site was built or copied incompletely.",
        "What to do: ask your instructor to rebuild and copy the whole site again."] };
    }
    return { kind: "ok", parts: ["Ready: Python and every package the notebooks need can be loaded" +
      (sameSite ? " from this site." : " (from " + pyodideUrl.host + ")."),
      "The first notebook takes a little while to start the first time; later it comes from your browser's cache."] };
  }

  function storageOpens() {
    // Resolves to "" when IndexedDB opens for this site, else to the browser's reason.
    const name = "transformer-course-probe";
    return new Promise((resolve) => {
      let request;
      try {
        request = indexedDB.open(name);
      } catch (error) {
        resolve(String(error.name || error));
        return;
      }
      request.onsuccess = () => {
        request.result.close();
        indexedDB.deleteDatabase(name);
        resolve("");
      };
      request.onerror = () => resolve(String((request.error && request.error.name) || "refused"));
    });
  }

  async function work() {
    const refused = await storageOpens();
    if (refused) {
      return { kind: "problem", stopsJupyterLab: true, parts: [
        "This browser keeps no data for this site, so the notebooks cannot open here and nothing you do would be kept.",
        "What happened: this browser refuses this site its storage (" + refused + "): site data is " +
          "blocked in its settings, or this is a private window that allows none.",
        "What to do: allow this site to keep data (cookies and site data) in the browser's settings, " +
          "or open the course in a normal window of Chromium, Chrome, Edge or Firefox."] };
    }
    const kept = "Your work is kept in this browser, for this site's address: " + window.location.origin +
      ". It holds your notebooks as you save them, and your progress.";
    const lasting = await persistent();
    const parts = [kept, lasting ? "This browser keeps it until you delete it yourself."
      : "This browser may not keep it for good: in a private window it lasts only until the window " +
        "is closed, and otherwise the browser may clear it (when site data is cleared, or the disk " +
        "runs low). Export your work now and then (Your work, below) to keep a copy."];
    if (!(window.isSecureContext && "serviceWorker" in navigator)) {
      parts.push("This site is served over plain http:// (not https://, not this computer's own address), so " +
        "Python in the notebooks cannot open your saved files: your progress is kept in this " +
        "browser's storage instead. A check cannot tell whether you changed a cell since you ran it " +
        "(run the cell, then its check), and notices about new versions of the course do not appear.");
    }
    return { kind: "ok", parts, persisted: lasting };
  }

  async function persistent() {
    // Ask the browser to keep this site's data for good (it may say no: a private window, or
    // a site the browser does not yet know well); true when it will.
    try {
      if (!navigator.storage || !navigator.storage.persist) return false;
      if (await navigator.storage.persisted()) return true;
      return await navigator.storage.persist();
    } catch (error) {
      return false;
    }
  }

  async function config(root) {
    const response = await fetch(new URL("static/course/course-config.json", root), { cache: "no-store" });
    return await response.json();
  }

  window.courseCheck = { python, work, config };
})();
