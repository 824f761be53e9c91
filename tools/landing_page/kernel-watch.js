// In JupyterLab's pages (lab/, notebooks/) of the course site: a plain notice when a notebook's
// Python has not started within a few seconds. JupyterLab itself shows only a kernel status of
// "Unknown" and cells that stay at [*]. The notice runs the landing page's checks
// (course-check.js) and says what they find, with what to do; while they find nothing wrong it
// says Python is still starting. It goes away once Python has started, unless the checks found
// that the notebooks cannot run even so (a site without numpy).
"use strict";

(function () {
  const SCRIPT = document.currentScript;
  const ROOT = new URL("../../", SCRIPT.src);          // this file is static/course/kernel-watch.js
  // How long Python may take before the notice says it is still starting (a page may set
  // window.courseKernelPatienceMs before this script runs).
  const PATIENCE_MS = Number(window.courseKernelPatienceMs ?? 8000);
  const STARTED = ["idle", "busy"];

  let notice = null;
  let found = null;                                   // what the checks found: {kind, parts}
  let starting = false;

  function started() {
    // The notebook toolbar's execution indicator reads "idle" before a kernel is even asked
    // for, then "unknown" or "starting" while it starts: started is idle or busy after that.
    const statuses = [...document.querySelectorAll(".jp-Notebook-ExecutionIndicator[data-status]")]
      .map((el) => el.dataset.status);
    if (statuses.some((status) => !STARTED.includes(status))) starting = true;
    return starting && statuses.some((status) => STARTED.includes(status));
  }

  function notebookOpen() {
    return document.querySelector(".jp-NotebookPanel") !== null;
  }

  let shown = "";

  function show(kind, parts) {
    const key = JSON.stringify([kind, parts]);
    if (notice && key === shown) return;             // said once: a live region is not repeated
    shown = key;
    if (!notice) {
      notice = document.createElement("aside");
      notice.id = "course-kernel-notice";
      notice.setAttribute("aria-label", "Python in this notebook");
      document.body.append(notice);
    }
    notice.className = "course-kernel-notice course-kernel-" + kind;
    notice.dataset.result = kind;
    notice.setAttribute("role", kind === "problem" ? "alert" : "status");
    notice.replaceChildren();
    parts.forEach((text, i) => {
      const p = document.createElement("p");
      if (i === 0) {
        const strong = document.createElement("strong");
        strong.textContent = (kind === "problem" ? "\u26A0 " : "\u2026 ") + text;
        p.append(strong);
      } else {
        p.textContent = text;
      }
      notice.append(p);
    });
    const more = document.createElement("p");
    const link = document.createElement("a");
    link.href = ROOT.href;
    link.textContent = "The course's start page checks this browser and lists the notebooks.";
    more.append(link);
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "Hide this notice";
    close.addEventListener("click", () => { notice.hidden = true; });
    notice.append(more, close);
  }

  function update(patienceOver) {
    // True once there is nothing more to say: Python started, and the checks found nothing
    // that stops the notebooks even so (packages missing from a core-only site).
    const up = started();
    if (found && found.kind === "problem" && (!up || found.pythonStarts)) {
      // A browser that keeps no site data stops JupyterLab itself: no notebook ever opens.
      if (notebookOpen() || found.stopsJupyterLab) show("problem", found.parts);
      return false;
    }
    if (up) {
      if (notice) notice.remove();
      notice = null;
      shown = "";
      return found !== null;
    }
    if (notebookOpen() && patienceOver) {
      show("waiting", ["Python has not started yet in this notebook.",
        "The first time, your browser downloads Python and the course's packages (some tens of " +
        "megabytes), which can take a minute or two on a slow network; later it starts from your " +
        "browser's cache. The status at the top right of the notebook reads Idle once it has started.",
        "If it has not started after a few minutes: reload the page; if that does not help, tell your instructor."]);
    }
    return false;
  }

  async function watch() {
    const start = Date.now();
    const check = window.courseCheck;
    check.config(ROOT).then(async (config) => {
      const results = await Promise.all([check.work(), check.python(config, ROOT)]);
      found = results.find((r) => r.kind === "problem") || results[1];
    }).catch(() => {});
    const timer = setInterval(() => {
      if (update(Date.now() - start >= PATIENCE_MS)) clearInterval(timer);
    }, 250);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();
