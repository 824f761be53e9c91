// In JupyterLab's pages (lab/, notebooks/) of the course site: one notebook open in two tabs
// never loses either tab's work.
//
// When a tab saves a notebook that another tab saved since, JupyterLab asks "File Changed ... Do
// you want to overwrite the file on disk with the version open here, or load the version on disk
// (revert)?", with Overwrite as the default button: Enter throws away what the other tab saved,
// and Revert what this tab has not saved. This script adds a first button, "Keep both", and
// makes it the default for Enter: this tab's version is saved as a copy
// beside the notebook ("NAME (this tab's copy).ipynb", numbered when taken), then the notebook
// is loaded as the other tab saved it, and a notice says where this tab's version went. JupyterLab's
// buttons stay, for a click or a Tab to them. It needs JupyterLab's application object, which the site's
// settings expose (jupyter-lite.json: exposeAppInBrowser).
"use strict";

(function () {
  const TITLE = /file changed/i;
  const COPY = " (this tab's copy)";

  function app() {
    return window.jupyterapp || null;
  }

  function widgetFor(name) {
    // The open document whose file the dialog names (it names the path, in quotes).
    const lab = app();
    if (!lab) return null;
    const open = [...lab.shell.widgets("main")].filter((w) => w.context && w.context.path);
    return open.find((w) => w.context.path === name) || open.find((w) => w.context.path.endsWith("/" + name)) ||
      open.find((w) => w.context.path.split("/").pop() === name) || null;
  }

  async function freePath(contents, path) {
    const slash = path.lastIndexOf("/") + 1, dot = path.lastIndexOf(".");
    const stem = dot > slash ? path.slice(0, dot) : path, ext = dot > slash ? path.slice(dot) : "";
    for (let n = 1; n < 1000; n++) {
      const candidate = stem + COPY + (n > 1 ? " " + n : "") + ext;
      try {
        await contents.get(candidate, { content: false });
      } catch (error) {
        return candidate;                                // not there: free
      }
    }
    throw new Error("no free name for a copy of " + path);
  }

  async function keepBoth(widget) {
    const context = widget.context, contents = app().serviceManager.contents;
    const path = await freePath(contents, context.path);
    const model = context.model;
    const type = context.contentsModel ? context.contentsModel.type : "notebook";
    const format = type === "notebook" ? "json" : (context.contentsModel && context.contentsModel.format) || "text";
    const content = type === "notebook" ? model.toJSON() : model.toString();
    await contents.save(path, { type, format, content });
    return path;
  }

  function notice(text) {
    const box = document.createElement("aside");
    box.className = "course-kernel-notice course-kernel-waiting course-two-tabs";
    box.setAttribute("role", "status");
    box.id = "course-two-tabs-notice";
    const p = document.createElement("p");
    p.textContent = text;
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "Hide this notice";
    close.addEventListener("click", () => box.remove());
    box.append(p, close);
    document.getElementById("course-two-tabs-notice")?.remove();
    document.body.append(box);
  }

  function adopt(dialog) {
    // True once the dialog is known (taken over, or not the one this script knows).
    const header = dialog.querySelector(".jp-Dialog-header");
    const footer = dialog.querySelector(".jp-Dialog-footer button");
    if (!header || !footer || !header.textContent.trim()) return false;      // still being built
    if (!TITLE.test(header.textContent)) return true;
    const body = dialog.querySelector(".jp-Dialog-body");
    const named = /"([^"]+)"/.exec(body ? body.textContent : "");
    const widget = named ? widgetFor(named[1]) : null;
    const buttons = [...dialog.querySelectorAll(".jp-Dialog-footer button")];
    const revert = buttons.find((b) => /revert/i.test(b.textContent));
    if (!widget || !revert) return true;                // not the dialog this script knows: leave it
    dialog.dataset.courseKeepBoth = "true";
    const keep = document.createElement("button");
    keep.type = "button";
    keep.className = "jp-Dialog-button jp-mod-accept jp-mod-styled course-keep-both";
    keep.innerHTML = '<div class="jp-Dialog-buttonLabel"></div>';
    keep.firstChild.textContent = "Keep both";
    keep.title = "Save this tab's version as a copy beside the notebook, then show the version on disk";
    let busy = false;
    keep.addEventListener("click", async () => {
      if (busy) return;
      busy = true;
      try {
        const copy = await keepBoth(widget);
        revert.click();
        notice("This notebook was changed in another tab. Both versions are kept: the other tab's is " +
          "open here, and this tab's is saved as " + copy + " in the file browser.");
      } catch (error) {
        busy = false;
        notice("This tab's version could not be saved as a copy (" + (error.message || error) + "); " +
          "nothing was changed. Copy what you need from this tab, then choose.");
      }
    });
    buttons[0].parentNode.insertBefore(keep, buttons[0]);
    keep.focus();
    return true;
  }

  // Enter in that dialog means Keep both; JupyterLab's own handler (on the dialog, in the
  // capture phase) never sees it. (Escape is JupyterLab's Cancel: nothing is saved or lost.)
  window.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const dialog = document.querySelector(".jp-Dialog[data-course-keep-both]");
    const keep = dialog && dialog.querySelector(".course-keep-both");
    if (!keep || (event.target.tagName === "BUTTON" && event.target !== keep)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    keep.click();
  }, true);

  function watch() {
    new MutationObserver(() => {
      const dialog = document.querySelector(".jp-Dialog:not([data-course-seen])");
      if (dialog && adopt(dialog)) dialog.dataset.courseSeen = "true";
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();
