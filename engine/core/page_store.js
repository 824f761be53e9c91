// The browser side of engine/core/page_store.py: one function, made once per kernel, that writes
// the progress record into the site's IndexedDB, merged with what another tab wrote meanwhile.
(() => {
  let opened = null;
  function open(name, storeName) {
    if (!opened) {
      opened = new Promise((resolve, reject) => {
        const request = indexedDB.open(name, 1);
        request.onupgradeneeded = () => request.result.createObjectStore(storeName);
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
        request.onblocked = () => reject(new Error("the storage is blocked by another tab"));
      });
      opened.catch(() => { opened = null; });
    }
    return opened;
  }
  // Merge `mine` into the stored record (or write it as it is, with replace) in one
  // transaction; resolves to the record now stored.
  return async (name, storeName, key, mine, merge, replace) => {
    const db = await open(name, storeName);
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction(storeName, "readwrite");
      const store = transaction.objectStore(storeName);
      let stored = mine;
      if (replace) {
        store.put(mine, key);
      } else {
        const request = store.get(key);
        request.onsuccess = () => {
          stored = request.result === undefined ? mine : merge(request.result, mine);
          store.put(stored, key);
        };
      }
      transaction.oncomplete = () => resolve(stored);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error || new Error("the write was abandoned"));
    });
  };
})()
