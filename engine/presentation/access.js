// The course's widgets, made usable with a keyboard and a screen reader (see access.py).
//
// ipywidgets gives no way to set ARIA attributes from Python, so this script adds them in the
// page, to the widgets inside every .course-widget root, and keeps them up to date:
// - a slider's handle is named by the slider's description (and its typed readout too);
// - Home and End on a slider go to its current ends, even after the lab changed them;
// - verdicts, results, hints and messages are polite live regions, read when they change;
// - a lab's image gets the lab's verdict as its text alternative, updated with the plot;
// - radio buttons form one named group, so Tab reaches the group and the arrows choose;
// - a text box with no description is named by its question's prompt, a number box by its slider
//   or by the name before it.
// - Tab from a cell that holds a course widget, in command mode, goes to its first control.
// - Enter in an answer box sends the box's text with it, so a check judges what the box shows.
// - each lab's figure is told the width it is shown at, the height it may take for the lab's
//   first control and the plot to fit one screen, and the screen's device pixels per CSS px,
//   so the kernel draws it for that size (engine/kit/figure_view.py): it writes "width height
//   ratio" into the figure's hidden size box.
// It installs itself once per page; running it again only refreshes.
(function () {
  "use strict";
  if (window.courseAccess) {
    window.courseAccess.refresh();
    return;
  }

  const ROOT = ".course-widget";
  const LIVE = [
    ".course-verdict", ".course-question-result", ".course-hints", ".course-solution-area",
    ".course-review-result", ".course-skip-ahead-result", ".course-skip-ahead-mark",
    ".course-progress-messages", ".course-release-result", ".course-storage-status", ".course-box-message",
  ].join(", ");
  const PROMPT = ".course-question-prompt, .course-review-about, .course-skip-ahead-question > .widget-html";

  let counter = 0;
  const idOf = (el) => el.id || (el.id = "course-access-" + (++counter));
  const text = (el) => (el ? el.textContent.replace(/\s+/g, " ").trim() : "");
  function set(el, name, value) {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  }

  function descriptionOf(widget) {
    const label = widget.querySelector(":scope > .widget-label");
    return text(label) ? label : null;
  }

  function promptOf(widget) {
    const holder = widget.closest(".course-question, .course-review, .course-skip-ahead-question");
    const prompt = holder && holder.querySelector(PROMPT);
    return text(prompt) ? prompt : null;
  }

  function nameSliders(root) {
    for (const slider of root.querySelectorAll(".widget-slider")) {
      const handle = slider.querySelector(".noUi-handle");
      const label = descriptionOf(slider);
      if (!handle || !label) continue;
      set(handle, "aria-labelledby", idOf(label));
      const readout = slider.querySelector(":scope > .widget-readout");
      if (readout && readout.isContentEditable) {
        set(readout, "role", "textbox");
        set(readout, "aria-label", text(label) + ": type a value, then Enter");
      }
    }
  }

  function makeLive(root) {
    for (const region of root.querySelectorAll(LIVE)) {
      const content = region.querySelector(":scope > .widget-html-content") || region;
      set(content, "aria-live", "polite");
      set(content, "aria-atomic", "true");
    }
  }

  function describeFigures(root) {
    const labs = root.matches(".course-lab") ? [root] : root.querySelectorAll(".course-lab");
    for (const lab of labs) {
      const verdict = text(lab.querySelector(".course-verdict"));
      for (const image of lab.querySelectorAll("img.course-figure-image")) {
        set(image, "alt", verdict || "The lab's plot");
      }
    }
  }

  function groupRadios(root) {
    for (const box of root.querySelectorAll(".widget-radio-box")) {
      set(box, "role", "radiogroup");
      const widget = box.closest(".widget-radio");
      const label = (widget && descriptionOf(widget)) || (widget && promptOf(widget));
      if (label) set(box, "aria-labelledby", idOf(label));
      const group = idOf(box);
      for (const input of box.querySelectorAll('input[type="radio"]')) {
        if (input.name !== group) input.name = group;
      }
    }
  }

  function nameTextBoxes(root) {
    for (const widget of root.querySelectorAll(".widget-text, .widget-textarea")) {
      const field = widget.querySelector("input, textarea");
      if (!field || descriptionOf(widget) || field.hasAttribute("aria-label")) continue;
      const pair = widget.closest(".course-slider-with-box");
      const slider = pair && pair.querySelector(".widget-slider");
      const entry = widget.closest(".course-number-entry");
      const name = entry && entry.querySelector(":scope > .course-entry-name");
      const label = slider ? descriptionOf(slider) : name && text(name) ? name : promptOf(widget);
      if (label) set(field, "aria-labelledby", idOf(label));
    }
  }

  // JupyterLab reads single keys pressed anywhere in a notebook in command mode as commands
  // (an arrow moves to another cell, D D deletes one). A key pressed on a course control is
  // the control's: it stops at the widget's root, after the control has used it. Keys with
  // Ctrl, Alt or Cmd, Shift+Enter, Tab and Escape go on to JupyterLab as usual.
  const guarded = new WeakSet();
  function keepKeys(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Tab" || event.key === "Escape" || (event.key === "Enter" && event.shiftKey)) return;
    event.stopPropagation();
  }

  // The size a lab's figure is shown at, in CSS px: the width its image may take (the image
  // keeps to its box less the widget margins) and the height left under the lab's first
  // control in the notebook's view. A figure is told again only when either changes.
  const told = new WeakMap();
  function viewHeight(el) {
    const view = el.closest(".jp-WindowedPanel-outer, .jp-Notebook");
    return view && view.clientHeight > 0 ? Math.min(view.clientHeight, window.innerHeight) : window.innerHeight;
  }
  function tellSize(figure) {
    const image = figure.querySelector("img.course-figure-image");
    const field = figure.querySelector(".course-figure-size input");
    if (!image || !field || image.offsetParent === null) return;
    const box = image.parentElement;
    const style = getComputedStyle(box), own = getComputedStyle(image);
    const width = Math.floor(box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
                             - parseFloat(own.marginLeft) - parseFloat(own.marginRight));
    // The rest of the lab that must share the screen with the plot: from the lab's first
    // control down to the plot (the controls come first at every size: access.css), or from
    // the lab's top if the plot comes first.
    const lab = figure.closest(".course-lab") || figure;
    const first = [...lab.querySelectorAll("input, select, button, .noUi-handle")].find((el) => el.offsetParent !== null);
    const plot = image.getBoundingClientRect(), home = lab.getBoundingClientRect();
    const control = first ? first.getBoundingClientRect() : { top: home.top, bottom: home.top };
    const rest = control.top < plot.top ? plot.top - control.top
                                        : (plot.top - home.top) + Math.max(control.bottom - plot.bottom, 0);
    const height = Math.floor(viewHeight(figure) - rest - 16);
    if (width <= 0) return;
    // The screen's device pixels per CSS px (3 on many phones, 2 at 200 % zoom): the kernel
    // draws the plot sharper for it, within its budget of pixels.
    const ratio = Math.round((window.devicePixelRatio || 1) * 100) / 100;
    const size = width + " " + Math.max(height, 0) + " " + ratio;
    if (told.get(figure) === size) return;
    told.set(figure, size);
    field.value = size;
    field.dispatchEvent(new Event("change", { bubbles: true }));   // ipywidgets listens on the box
  }
  const resized = new Set();
  let sizing = 0;
  function tellLater() {
    // Told once a resize has stopped for a moment: dragging a window's edge draws once.
    clearTimeout(sizing);
    sizing = setTimeout(() => {
      for (const figure of resized) if (figure.isConnected) tellSize(figure);
      resized.clear();
    }, 150);
  }
  const sizes = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const figure = entry.target.closest(".course-figure");
      for (const f of figure ? [figure] : entry.target.querySelectorAll(".course-figure")) resized.add(f);
    }
    tellLater();
  });
  const sized = new WeakSet();
  function watchFigures(root) {
    for (const figure of root.querySelectorAll(".course-figure")) {
      const image = figure.querySelector("img.course-figure-image");
      if (!image || sized.has(figure)) continue;
      sized.add(figure);
      sizes.observe(image.parentElement);
      sizes.observe(figure.closest(".course-lab") || figure);
      tellSize(figure);
    }
  }
  window.addEventListener("resize", () => {
    for (const figure of document.querySelectorAll(`${ROOT} .course-figure`)) resized.add(figure);
    tellLater();
  });

  function enhance(root) {
    if (!guarded.has(root)) {
      guarded.add(root);
      root.addEventListener("keydown", keepKeys);
    }
    nameSliders(root);
    makeLive(root);
    describeFigures(root);
    groupRadios(root);
    nameTextBoxes(root);
    watchFigures(root);
  }

  let pending = false;
  function refresh() {
    pending = false;
    for (const root of document.querySelectorAll(ROOT)) enhance(root);
  }
  function schedule() {
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(refresh);
    }
  }
  function touchesCourse(mutation) {
    const target = mutation.target.nodeType === 1 ? mutation.target : mutation.target.parentElement;
    if (target && target.closest(ROOT)) return true;
    for (const node of mutation.addedNodes) {
      if (node.nodeType === 1 && (node.matches(ROOT) || node.querySelector(ROOT))) return true;
    }
    return false;
  }
  new MutationObserver((mutations) => {
    if (mutations.some(touchesCourse)) schedule();
  }).observe(document.body, { childList: true, subtree: true, characterData: true });

  // Enter in an answer box (access.py's on_enter) sends the box's text in the same message
  // that asks for the check, as the value of the box's hidden partner: ipywidgets sends a typed
  // value and an Enter separately, and holds the value back while the box's earlier one is on
  // its way, so text typed fast and then Enter would be judged as it stood a few keys earlier.
  let enters = 0;
  document.addEventListener("keypress", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return;
    const field = event.target;
    if (!(field instanceof HTMLInputElement) || !field.closest(".course-enter")) return;
    const root = field.closest(ROOT);
    const sent = root && root.querySelector(".course-enter-sent input");
    if (!sent) return;                                 // no partner: ipywidgets' own Enter checks
    event.preventDefault();
    event.stopPropagation();
    sent.value = Date.now() + "." + (++enters) + " " + field.value;    // a new value each time
    sent.dispatchEvent(new Event("change", { bubbles: true }));       // ipywidgets listens on the box
  }, true);

  // Home and End: noUiSlider keeps the ends it had when it was made; a lab may have moved them
  // since (the position table's rows follow its length), so go to the current ones.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Home" && event.key !== "End") return;
    const handle = event.target;
    if (!(handle instanceof Element) || !handle.classList.contains("noUi-handle")) return;
    const slider = handle.closest(".noUi-target");
    if (!slider || !slider.noUiSlider || !slider.closest(ROOT)) return;
    const range = slider.noUiSlider.options.range;
    event.preventDefault();
    event.stopPropagation();
    slider.noUiSlider.set(event.key === "Home" ? range.min : range.max);
  }, true);

  // Tab from a cell that holds a course widget, in command mode (after Esc, after clicking the
  // cell's prompt, after moving there with the arrows): focus goes to the widget's first
  // control, not to JupyterLab's cell toolbar that comes first in the page. Inside a cell's
  // editor Tab stays JupyterLab's (it indents or completes).
  const CONTROL = 'input, select, textarea, button, [tabindex]:not([tabindex="-1"])';
  function firstControl(cell) {
    for (const el of cell.querySelectorAll(`${ROOT} :is(${CONTROL})`)) {
      if (el.disabled || el.tabIndex < 0 || el.offsetParent === null || el.closest(".course-access")) continue;
      return el;
    }
    return null;
  }
  function fromCell(event) {
    const active = document.activeElement;
    if (!(active instanceof Element) || active.closest(ROOT)) return null;
    if (active.closest(".jp-Editor, .cm-editor") || active.matches("input, select, textarea")) return null;
    const notebook = active.closest(".jp-Notebook");
    if (!notebook || !notebook.classList.contains("jp-mod-commandMode")) return null;
    const cell = active.closest(".jp-Cell") || notebook.querySelector(".jp-Cell.jp-mod-active");
    return cell ? firstControl(cell) : null;
  }
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return;
    const control = fromCell(event);
    if (!control) return;
    event.preventDefault();
    event.stopPropagation();
    control.focus();
  }, true);

  window.courseAccess = { refresh };
  refresh();
})();
