// The classroom benchmark's JavaScript, evaluated in the page by benchmarks/classroom.py
// (Playwright's page.wait_for_function). Each snippet follows a line '// --- NAME'.

// --- KERNEL_STARTED_AND_IDLE
// True once the notebook's kernel has started (any status other than idle or busy was seen: it
// was starting) and every execution indicator now reads idle.
() => {
    const s = [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator[data-status]')]
        .map(e => e.dataset.status);
    if (s.some(x => x !== 'idle' && x !== 'busy')) window.__starting = true;
    return window.__starting === true && s.length > 0 && s.every(x => x === 'idle');
}
