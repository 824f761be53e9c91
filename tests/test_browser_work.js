// The JavaScript tests/test_browser_work.py evaluates in the page. Each snippet follows a line
// '// --- NAME'.

// --- DRIVE_FILE
// The record of `path` in the JupyterLite drive of database `name` (IndexedDB), as JSON text; null
// when there is none.
async ([name, path]) => {
    if (!(await indexedDB.databases()).some(d => d.name === name)) return null;
    const db = await new Promise((ok, no) => { const r = indexedDB.open(name); r.onsuccess = () => ok(r.result);
                                               r.onerror = () => no(r.error); });
    if (!db.objectStoreNames.contains('files')) { db.close(); return null; }
    const value = await new Promise(ok => { const r = db.transaction('files').objectStore('files').get(path);
                                            r.onsuccess = () => ok(r.result); });
    db.close();
    return value === undefined ? null : JSON.stringify(value);
}

// --- DRIVE_HAS
// Whether `path` is in the JupyterLite drive of the site at /course/ (IndexedDB).
(path => new Promise(ok => {
    const r = indexedDB.open('JupyterLite Storage - /course/');
    r.onsuccess = () => {
        const db = r.result;
        if (!db.objectStoreNames.contains('files')) { db.close(); return ok(false); }
        const g = db.transaction('files').objectStore('files').get(path);
        g.onsuccess = () => { db.close(); ok(g.result !== undefined); };
    };
}))
