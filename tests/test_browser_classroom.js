// The JavaScript tests/test_browser_classroom.py evaluates in the page. Each snippet follows a
// line '// --- NAME'.

// --- START_BUTTON
// The landing page's start link: its address, whether it is disabled, and why (when it says).
() => {
    const a = document.getElementById('course-start'), why = document.getElementById('course-start-why');
    return {href: a.getAttribute('href'), disabled: a.getAttribute('aria-disabled'),
            why: why.hidden ? '' : why.innerText};
}

// --- STORED
// Every record of the course's progress store in this browser (IndexedDB 'transformer-course');
// none when there is no store.
async () => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open('transformer-course');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  if (!db.objectStoreNames.contains('progress')) { db.close(); return []; }
  const all = await new Promise((resolve) => {
    const request = db.transaction('progress').objectStore('progress').getAll();
    request.onsuccess = () => resolve(request.result);
  });
  db.close();
  return all;
}

// --- DRIVE_TEXT
// The record of `path` in the JupyterLite drive of database `name` (IndexedDB), as JSON text; ''
// when there is none yet.
async ([name, path]) => {
    if (!(await indexedDB.databases()).some(d => d.name === name)) return '';
    const db = await new Promise((ok, no) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result);
                                               r.onerror = () => no(r.error); });
    if (!db.objectStoreNames.contains('files')) { db.close(); return ''; }
    const value = await new Promise(ok => { const r = db.transaction('files').objectStore('files').get(path);
                                            r.onsuccess = () => ok(r.result); });
    db.close();
    return value === undefined ? '' : JSON.stringify(value);
}
