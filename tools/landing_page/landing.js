// The landing page's check: can Python (Pyodide) and the packages the notebooks need be loaded
// from where this site says they are? The kernel reads the same settings (jupyter-lite.json):
// its pyodideUrl (or the CDN by default) and the lock file that names each package's file.
// Only HEAD requests: nothing is downloaded.
"use strict";

const TIMEOUT_MS = 15000;

function setStatus(kind, parts) {
  const box = document.getElementById("runtime-check");
  box.className = "check check-" + kind;
  box.replaceChildren();
  const marks = { ok: "\u2713", problem: "\u26A0" };
  parts.forEach((text, i) => {
    const p = document.createElement("p");
    if (i === 0) {
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = marks[kind] || "";
      const strong = document.createElement("strong");
      strong.textContent = text;
      p.append(mark, strong);
    } else {
      p.textContent = text;
    }
    box.append(p);
  });
  box.dataset.result = kind;
}

async function reachable(url) {
  // {ok: true} when the file answers; else {ok: false, why: "refused" | "missing" | "timeout"}.
  const control = new AbortController();
  const timer = setTimeout(() => control.abort(), TIMEOUT_MS);
  try {
    let response = await fetch(url, { method: "HEAD", cache: "no-store", signal: control.signal });
    if (response.status === 405 || response.status === 501) {  // a host that does not answer HEAD
      response = await fetch(url, { cache: "no-store", signal: control.signal });
      if (response.body) response.body.cancel();
    }
    return response.ok ? { ok: true } : { ok: false, why: "missing", status: response.status };
  } catch (error) {
    return { ok: false, why: error.name === "AbortError" ? "timeout" : "refused" };
  } finally {
    clearTimeout(timer);
  }
}

async function kernelSettings(config) {
  try {
    const response = await fetch("jupyter-lite.json", { cache: "no-store" });
    const lite = await response.json();
    return ((lite["jupyter-config-data"] || {}).litePluginSettings || {})[config.kernelSettings] || {};
  } catch (error) {
    return {};
  }
}

function unreachable(host, sameSite, results) {
  if (sameSite) {
    return ["Python cannot load: files of the Python runtime are missing from this site.",
      "What happened: the site was copied or built incompletely (" + results.join(", ") + ").",
      "What to do: ask your instructor to rebuild and copy the whole site again."];
  }
  const timeout = results.some((r) => r.includes("timeout"));
  return ["Python cannot load, so the notebooks will not run in this browser.",
    "What happened: this browser could not " + (timeout ? "reach " + host + " in time" : "reach " + host) +
    ", where this site loads Python from. A school or company network may block it, or this " +
    "computer may be offline.",
    "What to do: try again on another network (for example at home), or ask your instructor " +
    "for the self-hosted version of the course, which loads everything from the course's own site."];
}

async function check() {
  const config = JSON.parse(document.getElementById("course-config").textContent);
  const settings = await kernelSettings(config);
  const pyodideUrl = new URL(settings.pyodideUrl || config.defaultPyodideUrl, document.baseURI);
  const sameSite = pyodideUrl.origin === window.location.origin;
  const runtime = ["pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]
    .map((name) => (name === "pyodide.mjs" ? pyodideUrl : new URL(name, pyodideUrl)));
  const answers = await Promise.all(runtime.map(reachable));
  const failed = answers.map((a, i) => (a.ok ? null : runtime[i].pathname.split("/").pop() + ": " + a.why))
    .filter(Boolean);
  if (failed.length) {
    setStatus("problem", unreachable(pyodideUrl.host, sameSite, failed));
    return;
  }
  const options = settings.loadPyodideOptions || {};
  const lockUrl = options.lockFileURL ? new URL(options.lockFileURL, document.baseURI)
    : new URL("pyodide-lock.json", pyodideUrl);
  let lock;
  try {
    lock = await (await fetch(lockUrl, { cache: "no-store" })).json();
  } catch (error) {
    setStatus("problem", ["Python cannot load: this site's list of Python packages is missing or damaged.",
      "What to do: ask your instructor to rebuild the site."]);
    return;
  }
  const missing = [];
  for (const name of config.needs) {
    const entry = (lock.packages || {})[name];
    const found = entry ? await reachable(new URL(entry.file_name, lockUrl)) : { ok: false };
    if (!found.ok) missing.push(name);
  }
  if (missing.length) {
    const core = missing.includes("numpy");
    setStatus("problem", [
      "Python starts here, but the notebooks cannot run: " + missing.join(", ") +
        (missing.length === 1 ? " is" : " are") + " missing.",
      core && config.kind === "self-hosted"
        ? "What happened: this site was built with only the core of Pyodide (the Python runtime " +
          "for browsers), which holds none of the packages the notebooks need."
        : "What happened: the packages the notebooks need cannot be loaded from where this site says they are.",
      "What to do: ask your instructor to rebuild the site with the full Pyodide distribution."]);
    return;
  }
  setStatus("ok", ["Ready: Python and every package the notebooks need can be loaded" +
    (sameSite ? " from this site." : " (from " + pyodideUrl.host + ")."),
    "The first notebook takes a little while to start the first time; later it comes from your browser's cache."]);
}

document.addEventListener("DOMContentLoaded", () => {
  check().catch((error) => setStatus("problem", [
    "The check could not finish (" + error + ").",
    "The notebooks may still work: press Start the course; if a notebook's cells never run, tell your instructor."]));
});
