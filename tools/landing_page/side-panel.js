// In JupyterLab's pages (lab/, notebooks/) of the course site: on a narrow screen (a phone) a
// notebook opens with JupyterLab's side panel closed. JupyterLab opens its file browser over
// most of a phone's width, leaving the notebook a sliver. The panel is closed once, when the
// first notebook appears; the folder icon opens it again. It is closed as a pointer press on
// the side bar's open tab closes it (JupyterLab's own way), so no part of JupyterLab's code is
// needed here.
"use strict";

(function () {
  const NARROW_PX = 700;                   // narrower than this, the side panel starts closed

  function openTab() {
    return document.querySelector(".jp-SideBar.lm-TabBar.jp-mod-left .lm-TabBar-tab.lm-mod-current");
  }

  function close(tab) {
    const box = tab.getBoundingClientRect();
    tab.dispatchEvent(new PointerEvent("pointerdown", {
      bubbles: true, cancelable: true, button: 0, isPrimary: true,
      clientX: box.left + box.width / 2, clientY: box.top + box.height / 2,
    }));
    document.dispatchEvent(new PointerEvent("pointerup", { bubbles: true, button: 0, isPrimary: true }));
  }

  function watch() {
    if (window.innerWidth >= NARROW_PX) return;
    const seen = new MutationObserver(() => {
      if (!document.querySelector(".jp-NotebookPanel")) return;
      seen.disconnect();
      const tab = openTab();
      if (tab) close(tab);
    });
    seen.observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", watch);
  } else {
    watch();
  }
})();
