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
