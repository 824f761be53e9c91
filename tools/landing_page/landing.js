// The landing page: shows what course-check.js finds (can Python load? can this browser keep
// the learner's work?), each in its own status box, and turns the start button off, with the
// reason beside it, when the course cannot run here.
"use strict";

function setStatus(id, kind, parts) {
  const box = document.getElementById(id);
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

function turnOffStart(reason) {
  // A link with no address cannot be followed or focused; the reason is said beside it.
  const start = document.getElementById("course-start");
  if (start.dataset.off) return;
  start.dataset.off = "true";
  start.removeAttribute("href");
  start.setAttribute("role", "link");
  start.setAttribute("aria-disabled", "true");
  start.setAttribute("aria-describedby", "course-start-why");
  start.classList.add("start-off");
  const why = document.getElementById("course-start-why");
  why.textContent = "The course cannot start in this browser: " + reason + " See below.";
  why.hidden = false;
}

async function check() {
  const config = JSON.parse(document.getElementById("course-config").textContent);
  const root = new URL(".", document.baseURI);
  const failed = (box, error) => setStatus(box, "problem", [
    "The check could not finish (" + error + ").",
    "The notebooks may still work: press Start the course; if a notebook's cells never run, tell your instructor."]);
  const work = window.courseCheck.work().then((result) => {
    setStatus("storage-check", result.kind, result.parts);
    if (result.kind === "problem") turnOffStart(result.parts[0]);
  }, (error) => failed("storage-check", error));
  const python = window.courseCheck.python(config, root).then((result) => {
    setStatus("runtime-check", result.kind, result.parts);
    if (result.kind === "problem") turnOffStart(result.parts[0]);
  }, (error) => failed("runtime-check", error));
  await Promise.all([work, python]);
}

document.addEventListener("DOMContentLoaded", () => { check(); });
