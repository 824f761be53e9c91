// The browser benchmark's JavaScript, evaluated in the page by benchmarks/browser.py (Playwright's
// page.evaluate). Each snippet follows a line '// --- NAME'; __KERNEL__ stands for the kernel
// connection of the notebook on show.

// --- ARM
// Time one key press on a lab's slider handle to its new plot on screen, in stages. Every time is
// the page's clock (performance.timeOrigin + performance.now(), ms since 1970) but `date`, the
// kernel's clock when it made a message (its header's date; the same machine's clock, to the ms).
// key: the keydown; sent: the slider's new value sent to the kernel; busy: the kernel's "busy"
// for it (made: `date`); picture: the message that brings the new plot (made: `date`, received:
// `at`); src: the image's src set; load, decoded: the image loaded and decoded; frame: the first
// animation frame after that, when the plot is on screen. `ms` runs from key to frame.
([lab, handle]) => {
    const img = lab.querySelector('.course-figure img, img');
    const kernel = __KERNEL__;
    const now = () => performance.timeOrigin + performance.now();
    const state = {done: false, ms: null, before: img.src, key: null, sent: null, busy: null, picture: null};
    window.__courseBench = state;
    handle.addEventListener('keydown', () => { if (state.key === null) state.key = now(); },
                            {capture: true, once: true});
    const listen = (_, {msg, direction}) => {
        if (state.key === null || state.src) return;
        const type = msg.header.msg_type, date = Date.parse(msg.header.date);
        if (direction === 'send' && type === 'comm_msg' && state.sent === null) state.sent = now();
        else if (direction === 'recv' && type === 'status' && msg.content.execution_state === 'busy'
                 && state.sent !== null && state.busy === null) state.busy = {at: now(), date};
        else if (direction === 'recv' && type === 'comm_msg' && (msg.buffers || []).length)
            state.picture = {at: now(), date};       // the last message with bytes before the src is set
    };
    kernel.anyMessage.connect(listen);
    const observer = new MutationObserver(() => {
        if (img.src === state.before || state.key === null) return;
        observer.disconnect();
        kernel.anyMessage.disconnect(listen);
        state.src = now();
        (img.complete ? Promise.resolve() : new Promise(r => img.addEventListener('load', r, {once: true})))
            .then(() => { state.load = now(); return img.decode().catch(() => null); })
            .then(() => { state.decoded = now(); requestAnimationFrame(() => {
                state.frame = now(); state.ms = state.frame - state.key; state.done = true; }); });
    });
    observer.observe(img, {attributes: true, attributeFilter: ['src']});
}

// --- ARM_DRAG
// Time-stamp every key press on the handle and every new plot shown (loaded, decoded and the
// next animation frame), until state.stop().
([lab, handle]) => {
    const img = lab.querySelector('.course-figure img, img');
    const state = {keys: [], shown: []};
    window.__courseDrag = state;
    handle.addEventListener('keydown', () => state.keys.push(performance.now()), {capture: true});
    const observer = new MutationObserver(() => {
        const src = img.src;
        (img.complete ? Promise.resolve() : new Promise(r => img.addEventListener('load', r, {once: true})))
            .then(() => img.decode().catch(() => null))
            .then(() => requestAnimationFrame(() => state.shown.push([performance.now(), src])));
    });
    observer.observe(img, {attributes: true, attributeFilter: ['src']});
    state.stop = () => observer.disconnect();
}
