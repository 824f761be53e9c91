// The course run's JavaScript, evaluated in the page by tools/site_run.py (Playwright's
// page.evaluate). Each snippet follows a line '// --- NAME'; __APP__, __CURRENT__, __KERNEL__,
// __PANEL__ and __LAB_STATE__ stand for JupyterLab's handle in the page, the current notebook
// panel, its kernel, the selector of the visible notebook, and the snippet LAB_STATE.

// --- RUN_ALL
// Run All, as the learner's menu does, timing each code cell in the page from the kernel's "busy"
// to its "idle" for that cell's request (queued cells do not wait on the page in between); stop
// waiting when one cell has been running for longer than `ms`.
async ([code, ms]) => {
    const panel = __CURRENT__, nb = panel.content, kernel = panel.sessionContext.session.kernel;
    const cells = nb.widgets, sent = [], busy = {}, idle = {}, replies = {};
    code.forEach(i => cells[i].node.setAttribute('data-course-run-cell', String(i)));
    let next = 0;
    const listen = (_, {msg, direction}) => {
        const type = msg.header.msg_type, parent = msg.parent_header && msg.parent_header.msg_id;
        if (direction === 'send' && type === 'execute_request') {
            while (next < code.length && cells[code[next]].model.sharedModel.getSource() !== msg.content.code) next++;
            if (next < code.length) sent.push([msg.header.msg_id, code[next++]]);
        } else if (direction === 'recv' && parent) {
            const now = performance.now(), state = msg.content.execution_state;
            if (type === 'status' && state === 'busy' && !(parent in busy)) busy[parent] = now;
            if (type === 'status' && state === 'idle' && !(parent in idle)) idle[parent] = now;
            if (type === 'execute_reply') replies[parent] = msg.content.status;
        }
    };
    kernel.anyMessage.connect(listen);
    let late = null, timer = null;
    const all = __APP__.commands.execute('notebook:run-all-cells').then(() => true, () => true);
    const watch = new Promise(resolve => {
        timer = setInterval(() => {
            const now = performance.now();
            for (const [id, index] of sent)
                if (id in busy && !(id in idle) && now - busy[id] > ms) { late = index; resolve(false); }
        }, 100);
    });
    await Promise.race([all, watch]);
    clearInterval(timer);
    kernel.anyMessage.disconnect(listen);
    return {late, cells: sent.map(([id, index]) => ({
        index, status: replies[id] || null,
        seconds: id in busy && id in idle ? (idle[id] - busy[id]) / 1000 : null,
        outputs: cells[index].model.outputs.toJSON().map(o => ({
            type: o.output_type, name: o.name || null, ename: o.ename || null, evalue: o.evalue || null,
            text: o.output_type === 'stream' ? [].concat(o.text).join('') : null}))}))};
}

// --- PROBE_KERNEL
async code => {
    const future = __KERNEL__.requestExecute({code, silent: false, store_history: false});
    let text = '';
    future.onIOPub = msg => {
        if (msg.header.msg_type === 'stream') text += msg.content.text;
        if (msg.header.msg_type === 'error') text += msg.content.ename + ': ' + msg.content.evalue;
    };
    await future.done;
    return text;
}

// --- LAB_STATE
// What a lab shows in answer to its controls: its pictures and its text, the controls' own
// labels and readouts left out (they change at once, before the lab has answered).
lab => {
    const copy = lab.cloneNode(true);
    copy.querySelectorAll('.widget-slider, .widget-readout, select, input, button, label')
        .forEach(n => n.remove());
    return [...lab.querySelectorAll('img')].map(i => i.src).join('|') + copy.textContent;
}

// --- WATCH_LAB
// Note the lab's state, then the time of the first input event (key press, click, change) and of
// the first change of the lab's state after it.
lab => {
    const state = __LAB_STATE__;
    const before = state(lab);
    lab.__courseInput = null;
    lab.__courseAnswer = null;
    const mark = () => { if (lab.__courseInput === null) lab.__courseInput = performance.now(); };
    for (const type of ['keydown', 'pointerdown', 'change', 'input']) lab.addEventListener(type, mark, true);
    const observer = new MutationObserver(() => {
        if (lab.__courseInput !== null && lab.__courseAnswer === null && state(lab) !== before) {
            lab.__courseAnswer = performance.now() - lab.__courseInput;
            observer.disconnect();
        }
    });
    observer.observe(lab, {subtree: true, childList: true, attributes: true, characterData: true});
}

// --- LAB_NAME
lab => ([...lab.classList].find(c => c.startsWith('course-lab-')) || 'course-lab-?').slice(11)

// --- FEEDBACK
cell => [...cell.querySelectorAll('.course-feedback')].map(f =>
    [f.getAttribute('data-exercise'), [...f.classList].join(' '), f.innerText.slice(0, 300)])

// --- STDERR
() => [...document.querySelectorAll(
        "__PANEL__ .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")]
    .map(o => [Number((o.closest('[data-course-run-cell]') || {getAttribute: () => -1})
                      .getAttribute('data-course-run-cell')), o.innerText.slice(0, 300)])

// --- OPENED
// The notebook at `path` is open, its kernel idle.
path => {
    const app = __APP__;
    if (!app || !app.shell) return false;
    const panel = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return Boolean(kernel) && kernel.status === 'idle';
}

// --- ALONE
// Close every other document (JupyterLite may restore the last one opened), make it the current one.
async path => {
    const app = __APP__;
    for (const w of [...app.shell.widgets('main')]) {
        if (w.context && w.context.path === path) { app.shell.activateById(w.id); continue; }
        try { if (w.sessionContext) await w.sessionContext.shutdown(); } catch (e) {}
        w.dispose();
    }
    return __CURRENT__.context.path === path;
}

// --- CLOSE_ALL
// Shut every open document's kernel down and close the document.
async () => {
    for (const w of [...__APP__.shell.widgets('main')]) {
        try { if (w.sessionContext) await w.sessionContext.shutdown(); } catch (e) {}
        w.dispose();
    }
}

// --- SAVE_NOTEBOOKS
// Save each [path, notebook] of `files` into the drive (the browser's, or the server's folder),
// making the folders on the way; check that each one is there.
async ([folder, files]) => {
    const contents = __APP__.serviceManager.contents;
    const made = new Set();
    for (const [path, notebook] of files) {
        const parts = path.split('/');
        for (let i = 1; i < parts.length; i++) {
            const dir = parts.slice(0, i).join('/');
            if (made.has(dir)) continue;
            try { await contents.get(dir, {content: false}); }
            catch (e) { await contents.save(dir, {type: 'directory'}); }
            made.add(dir);
        }
        await contents.save(path, {type: 'notebook', format: 'json', content: notebook});
        await contents.get(path, {content: false});   // it is there, or this throws
    }
}
