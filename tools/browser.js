// The JavaScript tools/browser.py evaluates in a JupyterLab page (Playwright's page.evaluate and
// page.wait_for_function). Each snippet follows a line '// --- NAME'; __APP__ stands for
// JupyterLab's handle in the page.

// --- NOTEBOOK_OPEN
// A notebook is the current document and has a session context.
() => __APP__ && __APP__.shell.currentWidget && __APP__.shell.currentWidget.sessionContext

// --- KERNEL_IDLE
// The current notebook's kernel has started and is idle.
() => {
    const session = __APP__.shell.currentWidget.sessionContext.session;
    return session && session.kernel && session.kernel.status === 'idle';
}

// --- ALL_CELLS_RUN
// Every code cell of the current notebook has run (none waits with [*]) and the kernel is idle.
() => {
    const nb = __APP__.shell.currentWidget.content;
    const code = nb.widgets.filter(c => c.model.type === 'code');
    return code.every(c => c.model.executionCount !== null) &&
           !code.some(c => (c.node.querySelector('.jp-InputPrompt')?.innerText || '').includes('[*]')) &&
           __APP__.shell.currentWidget.sessionContext.session.kernel.status === 'idle';
}

// --- ANSWERED
// The kernel of the open notebook has answered everything the page sent it: it is idle, and no
// request (a cell to run, a control's new value, a button's click) still waits for the kernel's
// answer to end (a request is done once its reply and the "idle" that follows its answer are in).
// The kernel's updates to the widgets come before that "idle", and JupyterLab applies them in
// order, so they are on the page by then. JupyterLab keeps its requests in its kernel
// connection's _futures (no public API lists them); each one's public `done` settles when its
// answer has ended.
() => {
    const widget = __APP__ && __APP__.shell.currentWidget;
    const session = widget && widget.sessionContext && widget.sessionContext.session;
    const kernel = session && session.kernel;
    if (!kernel) return false;
    if (!(kernel._futures instanceof Map))
        throw new Error('this JupyterLab keeps no _futures in its kernel connection: '
                        + 'tools/browser.py cannot tell when the kernel has answered');
    let waiting = 0;
    for (const future of kernel._futures.values()) {
        if (!('__ended' in future)) {
            future.__ended = false;
            const end = () => { future.__ended = true; };
            future.done.then(end, end);
        }
        if (!future.__ended && !future.isDisposed) waiting += 1;
    }
    return kernel.status === 'idle' && waiting === 0;
}

// --- PICTURES_LOADED
// Every picture in the open notebook's course widgets has loaded (a plot the kernel just sent is
// decoded after it arrives).
() => [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .course-widget img')].every(img => img.complete)

// --- TWO_FRAMES
// Two frames: what the page does on its next frame is done (the course's page script names the
// controls and describes the plots there).
() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))
