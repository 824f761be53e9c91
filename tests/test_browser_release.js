// The JavaScript tests/test_browser_release.py evaluates in the page. Each snippet follows a line
// '// --- NAME'.

// --- STORED
// The notebook at `path`, as JupyterLite keeps it in this browser (IndexedDB, the "files" store of
// its "JupyterLite Storage - <base URL>" database), holds `text`.
async ([path, text]) => {
    const names = (await indexedDB.databases()).map(d => d.name).filter(n => n.startsWith('JupyterLite Storage'));
    for (const name of names) {
        const db = await new Promise((resolve, reject) => {
            const request = indexedDB.open(name);
            request.onsuccess = () => resolve(request.result);
            request.onerror = () => reject(request.error);
        });
        try {
            if (!db.objectStoreNames.contains('files')) continue;
            const file = await new Promise((resolve, reject) => {
                const request = db.transaction('files').objectStore('files').get(path);
                request.onsuccess = () => resolve(request.result);
                request.onerror = () => reject(request.error);
            });
            if (file && JSON.stringify(file).includes(text)) return true;
        } finally {
            db.close();
        }
    }
    return false;
}

// --- IN_FRONT
// The tab of the notebook named `path` is the current one, and its notebook is shown; if the tab is
// there but another is in front, it is clicked (JupyterLab restores the notebooks this browser had
// open, and may bring one of them to the front after the one the address names).
path => {
    const tab = [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab')]
        .find(t => (t.querySelector('.lm-TabBar-tabLabel') || {}).textContent === path);
    if (!tab) return false;
    if (!tab.classList.contains('lm-mod-current')) {
        tab.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, cancelable: true, button: 0}));
        return false;
    }
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    return !!panel && !!panel.querySelector('.jp-CodeCell .cm-content');
}
