// The landing page's "Your work" box: the address the learner's work belongs to, and moving that
// work to another address in one export and one import. No outside code, no Python.
//
// A browser keeps a site's data per address (scheme, host and port): the same course opened at
// another port, at localhost instead of 127.0.0.1, or at a new IP address starts blank. What the
// course keeps, all in this browser's IndexedDB for this address:
// - JupyterLite's drive, the database "JupyterLite Storage - <site path>": its stores "files"
//   (every notebook and file the learner saved, course-progress.json among them), "checkpoints"
//   and "settings" (JupyterLab's settings), each record keyed by its path;
// - on a plain http:// address, the progress record the course mirrors in the database
//   "transformer-course", store "progress", keyed by the site's address
//   (exercises/core/page_store.py).
// Export writes all of that into one JSON file; import writes it into this address's databases.
// Nothing here is ever overwritten: a file that exists here with other content is kept, and the
// imported one is written beside it as "NAME (from ADDRESS).EXT".
"use strict";

(function () {
  const FORMAT = "transformer-course-work";
  const STORES = ["files", "checkpoints", "settings"];
  const PROGRESS = { database: "transformer-course", store: "progress" };

  function siteRoot() {
    return new URL(".", document.baseURI);
  }

  function address() {
    return siteRoot().href;
  }

  function driveName() {
    return "JupyterLite Storage - " + siteRoot().pathname;
  }

  function request(req) {
    return new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }

  async function exists(name) {
    if (!indexedDB.databases) return true;            // cannot tell: open it (an empty one is harmless)
    return (await indexedDB.databases()).some((db) => db.name === name);
  }

  async function openDatabase(name, stores, create) {
    // The database with these object stores (made when create is true), or null.
    if (!create && !(await exists(name))) return null;
    let db = await request(indexedDB.open(name));
    const missing = stores.filter((s) => !db.objectStoreNames.contains(s));
    if (!missing.length) return db;
    if (!create) return db;
    const version = db.version + 1;
    db.close();
    const upgrade = indexedDB.open(name, version);
    upgrade.onupgradeneeded = () => missing.forEach((s) => upgrade.result.createObjectStore(s));
    return await request(upgrade);
  }

  async function readAll(db, store) {
    if (!db || !db.objectStoreNames.contains(store)) return [];
    const tx = db.transaction(store);
    const [keys, values] = await Promise.all([request(tx.objectStore(store).getAllKeys()),
      request(tx.objectStore(store).getAll())]);
    return keys.map((key, i) => [key, values[i]]);
  }

  async function exportWork() {
    const drive = await openDatabase(driveName(), STORES, false);
    const stores = {};
    for (const store of STORES) stores[store] = await readAll(drive, store);
    if (drive) drive.close();
    const progressDb = await openDatabase(PROGRESS.database, [PROGRESS.store], false);
    const progress = await readAll(progressDb, PROGRESS.store);
    if (progressDb) progressDb.close();
    return { format: FORMAT, version: 1, address: address(), exported_at: new Date().toISOString(),
      stores, progress };
  }

  function fileName(work) {
    const where = new URL(work.address);
    const place = (where.hostname + (where.port ? "-" + where.port : "")).replace(/[^A-Za-z0-9.-]+/g, "-");
    return "course-work-" + place + "-" + work.exported_at.slice(0, 16).replace(/[:T]/g, "-") + ".json";
  }

  function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  function besideName(path, from) {
    // "sub/01_x.ipynb" -> "sub/01_x (from 127.0.0.1-8000).ipynb"
    const slash = path.lastIndexOf("/") + 1, dot = path.lastIndexOf(".");
    const stem = dot > slash ? path.slice(0, dot) : path, ext = dot > slash ? path.slice(dot) : "";
    return stem + " (from " + from + ")" + ext;
  }

  async function importWork(work) {
    // Write an export into this address's storage; {written, kept, progress} for the message.
    if (!work || work.format !== FORMAT || typeof work.stores !== "object") {
      throw new Error("this is not a file the course's Export my work wrote");
    }
    const from = new URL(work.address).host.replace(/:/g, "-");
    const drive = await openDatabase(driveName(), STORES, true);
    const result = { written: [], beside: [], progress: "none" };
    const renamed = {};
    for (const store of ["files", "checkpoints", "settings"]) {
      for (const [key, value] of work.stores[store] || []) {
        const tx = drive.transaction(store, "readwrite");
        const objects = tx.objectStore(store);
        const here = await request(objects.get(key));
        if (here === undefined) {
          objects.put(value, key);
          if (store === "files" && value && value.type !== "directory") result.written.push(key);
        } else if (!same(here, value) && store !== "settings" && !(value && value.type === "directory")) {
          const other = renamed[key] || besideName(key, from);
          renamed[key] = other;
          const moved = store === "files" ? { ...value, path: other, name: other.split("/").pop() }
            : (Array.isArray(value) ? value.map((c) => ({ ...c, path: other })) : value);
          objects.put(moved, other);
          if (store === "files") result.beside.push(other);
        }
        await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); });
      }
    }
    drive.close();
    if ((work.progress || []).length) {
      const db = await openDatabase(PROGRESS.database, [PROGRESS.store], true);
      const tx = db.transaction(PROGRESS.store, "readwrite");
      const store = tx.objectStore(PROGRESS.store);
      const here = await request(store.get(address()));
      const theirs = work.progress.find(([key]) => key === work.address) || work.progress[0];
      if (here === undefined) {
        store.put(theirs[1], address());
        result.progress = "written";
      } else {
        result.progress = same(here, theirs[1]) ? "same" : "kept";
      }
      await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); });
      db.close();
    }
    return result;
  }

  function say(text) {
    document.getElementById("work-status").textContent = text;
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function setUp() {
    const shown = document.getElementById("work-address");
    if (!shown) return;
    shown.textContent = address();
    document.getElementById("work-export").addEventListener("click", async () => {
      try {
        const work = await exportWork();
        const blob = new Blob([JSON.stringify(work)], { type: "application/json" });
        const link = document.createElement("a");
        link.href = URL.createObjectURL(blob);
        link.download = fileName(work);
        document.body.append(link);
        link.click();
        link.remove();
        const files = work.stores.files.filter(([, v]) => v && v.type !== "directory").length;
        say("Exported " + plural(files, "saved file") + " (your notebooks and your progress) as " +
          link.download + ". Open the course at its new address and import this file there.");
      } catch (error) {
        say("The export did not work (" + (error.message || error) + "): nothing was written.");
      }
    });
    document.getElementById("work-import").addEventListener("change", async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      let work;
      try {
        work = JSON.parse(await file.text());
      } catch (error) {
        say("That file cannot be imported: it is not an export of your work (not JSON).");
        return;
      }
      try {
        const done = await importWork(work);
        const parts = ["Imported " + plural(done.written.length, "file") + " from " + work.address + "."];
        if (done.beside.length) {
          parts.push(plural(done.beside.length, "file") + " already here with other content stayed as " +
            (done.beside.length === 1 ? "it was" : "they were") + "; the imported " +
            (done.beside.length === 1 ? "one is" : "ones are") + " beside: " + done.beside.join(", ") + ".");
        }
        if (done.progress === "kept") {
          parts.push("This address already had progress of its own, which was kept.");
        }
        parts.push("Open a notebook to go on where you were.");
        say(parts.join(" "));
      } catch (error) {
        say("That file cannot be imported: " + (error.message || error) + ".");
      } finally {
        event.target.value = "";
      }
    });
  }

  window.courseWork = { exportWork, importWork, address, driveName };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
