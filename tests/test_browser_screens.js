// The JavaScript tests/test_browser_screens.py evaluates in the page (Playwright's evaluate and
// wait_for_function). Each snippet follows a line '// --- NAME'; __APP__ and __PANEL__ stand for
// JupyterLab's handle in the page and the selector of the notebook shown.

// --- STICKING_OUT
// The parts of a lab that stick out of its output area, and its plot's shown and drawn widths.
(lab) => {
    const area = lab.closest('.jp-OutputArea-output').getBoundingClientRect();
    const out = [];
    const parts = '.widget-box, .widget-inline-hbox, .widget-html, .widget-output, img, table, select, input, button, .slider-container';
    for (const el of lab.querySelectorAll(parts)) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || el.closest('.course-access')) continue;
        if (box.right > area.right + 1 || box.left < area.left - 1)
            out.push(el.tagName.toLowerCase() + '.' + String(el.className).split(' ').slice(-1)[0] + ' '
                     + Math.round(box.left - area.left) + '..' + Math.round(box.right - area.left) + ' of ' + Math.round(area.width));
    }
    const image = lab.querySelector('img.course-figure-image');
    return {out, image: image ? [image.getBoundingClientRect().width, image.naturalWidth] : null, area: area.width};
}

// --- WIDER_THAN_THE_NOTEBOOK
// Whether the page scrolls sideways, and the course's elements that reach past the notebook's view.
() => {
    const nb = __APP__.shell.currentWidget.content.node;
    const view = (nb.querySelector('.jp-WindowedPanel-outer') || nb).getBoundingClientRect();
    const wide = [...document.querySelectorAll('[data-course-audit]')]
        .filter(el => el.getBoundingClientRect().right > view.right + 1)
        .map(el => String(el.className).split(' ').filter(c => c.startsWith('course-')).join(' '));
    return {page: document.documentElement.scrollWidth > window.innerWidth, wide};
}

// --- OVERFLOWING_OUTPUTS
// The outputs of the notebook shown that scroll sideways: what each shows, its width and its room.
() => [...document.querySelectorAll('__PANEL__ .jp-OutputArea-output')]
.filter(out => out.offsetParent !== null && out.scrollWidth > out.clientWidth)
.map(out => {
    const lab = out.querySelector('.course-lab');
    const what = lab ? [...lab.classList].find(c => c.startsWith('course-lab-'))
                     : out.innerText.trim().slice(0, 40);
    return what + ': ' + out.scrollWidth + ' px in ' + out.clientWidth;
})

// --- BROKEN_MID_WORD
// How many printed outputs of the notebook shown break their lines inside words.
() => [...document.querySelectorAll('__PANEL__ .jp-OutputArea-output pre')]
    .filter(pre => getComputedStyle(pre).wordBreak === 'break-all').length

// --- DRAWN_FOR_ITS_WIDTH
// A plot drawn for the width it is shown at: as many pixels wide as it is shown (within a
// pixel), so its text is shown at the size it was drawn.
(image) => {
    const shown = image.getBoundingClientRect().width;
    return image.complete && image.naturalWidth > 0 && Math.abs(image.naturalWidth - shown) <= 1;
}

// --- TEXT_SHOWN
// A plot's smallest text as shown, CSS px (its class course-figure-text-N gives it as drawn, in
// tenths of a px), and its shown and drawn widths.
(image) => {
    const drawn = [...image.classList].find(c => c.startsWith('course-figure-text-'));
    const shown = image.getBoundingClientRect().width / image.naturalWidth;
    return {px: drawn ? Number(drawn.slice('course-figure-text-'.length)) / 10 * shown : null,
            shown: image.getBoundingClientRect().width, natural: image.naturalWidth};
}

// --- FITS_ONE_VIEW
// The lab scrolled to the top of the notebook's view; then its first control and its whole
// plot lie inside the view.
(lab) => {
    const view = lab.closest('.jp-WindowedPanel-outer') || lab.closest('.jp-Notebook');
    const top = view.getBoundingClientRect().top;
    view.scrollTop += lab.getBoundingClientRect().top - top;
    const bottom = Math.min(view.getBoundingClientRect().bottom, window.innerHeight);
    const first = [...lab.querySelectorAll('input, select, button, .noUi-handle')].find(el => el.offsetParent !== null);
    const image = lab.querySelector('img.course-figure-image');
    const a = first.getBoundingClientRect(), b = image.getBoundingClientRect();
    return {fits: image.complete && a.top >= top - 1 && a.bottom <= bottom + 1 && b.top >= top - 1 && b.bottom <= bottom + 1,
            control: [Math.round(a.top - top), Math.round(a.bottom - top)],
            plot: [Math.round(b.top - top), Math.round(b.bottom - top)], view: Math.round(bottom - top)};
}

// --- LEFT_PANEL_CLOSED
// JupyterLab's left panel is closed (or there is none).
() => { const stack = document.querySelector('#jp-left-stack'); return !stack || stack.getBoundingClientRect().width === 0; }

// --- PICTURES_FIT
// Every picture of the course's labs told the width its box has now and the screen's device
// pixels per CSS px (engine/presentation/access.js writes them into the figure's size box), and
// drawn
// for them: its width (CSS px, the kernel's) the width it takes on the page, and decoded.
(ratio) => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .course-lab .course-figure')]
.filter(figure => figure.querySelector('img.course-figure-image') && figure.offsetParent !== null)
.every(figure => {
    const img = figure.querySelector('img.course-figure-image');
    const told = (figure.querySelector('.course-figure-size input') || {value: ''}).value.split(' ').map(Number);
    const box = img.parentElement, style = getComputedStyle(box), own = getComputedStyle(img);
    const room = Math.floor(box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
                            - parseFloat(own.marginLeft) - parseFloat(own.marginRight));
    return told[0] === room && told[2] === ratio && img.complete && img.naturalWidth > 0
           && Math.abs(Number(img.getAttribute('width')) - img.getBoundingClientRect().width) <= 1.5
           && img.naturalWidth >= Number(img.getAttribute('width')) - 1;
})

// --- OVERLAPS
// In one course widget: a choice whose text leaves its label, or whose label leaves its group;
// two choices, or any two of its parts (controls, texts, pictures, buttons), drawn over each other.
(root) => {
    const out = [];
    const shown = el => el.offsetParent !== null && !el.closest('.course-access')
                        && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
    const name = el => (el.textContent || el.getAttribute('alt') || el.className || '').replace(/\s+/g, ' ').trim().slice(0, 40);
    const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
                           && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    for (const group of root.querySelectorAll('.widget-radio-box')) {
        if (!shown(group)) continue;
        const labels = [...group.querySelectorAll(':scope > label')].filter(shown);
        const around = group.getBoundingClientRect();
        labels.forEach((label, i) => {
            const box = label.getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(label);
            const spills = [...range.getClientRects()].some(r => r.width > 0 &&
                (r.top < box.top - 1 || r.bottom > box.bottom + 1 || r.left < box.left - 1 || r.right > box.right + 1));
            if (spills) out.push('the text of the choice “' + name(label) + '” spills out of its label');
            if (box.bottom > around.bottom + 1 || box.right > around.right + 1)
                out.push('the choice “' + name(label) + '” lies outside its group');
            for (const other of labels.slice(i + 1))
                if (meet(box, other.getBoundingClientRect()))
                    out.push('the choices “' + name(label) + '” and “' + name(other) + '” overlap');
        });
    }
    const parts = '.widget-radio-box, .widget-radio > .widget-label, .jupyter-button, .widget-slider, .widget-text, '
                + '.widget-dropdown, .widget-checkbox, .widget-html, .widget-label, img.course-figure-image';
    const all = [...root.querySelectorAll(parts)].filter(shown);
    const outer = all.filter(el => !all.some(other => other !== el && other.contains(el)));
    outer.forEach((el, i) => {
        for (const other of outer.slice(i + 1))
            if (meet(el.getBoundingClientRect(), other.getBoundingClientRect()))
                out.push('“' + name(el) + '” and “' + name(other) + '” are drawn over each other');
    });
    return out;
}

// --- LAB_WIDTHS
// {lab name: the widths its pictures are shown at} for every lab of the notebook shown.
() => Object.fromEntries([...document.querySelectorAll('__PANEL__ .course-lab')].map(lab =>
    [[...lab.classList].find(c => c.startsWith('course-lab-')).slice(11),
     [...lab.querySelectorAll('img.course-figure-image')].map(img => img.getBoundingClientRect().width)]))

// --- MARK_LABS_SCROLLED
// Mark every lab's cell "scrolled", as JupyterLab does when a learner toggles output scrolling
// (or the Notebook interface's autoScrollOutputs for a tall output); how many cells were marked.
() => __APP__.shell.currentWidget.content.widgets
    .filter(cell => cell.node.querySelector('.jp-OutputArea .course-lab'))
    .map(cell => { cell.outputsScrolled = true; return cell.node.classList.contains('jp-mod-outputsScrolled'); })
    .filter(Boolean).length

// --- LABS_IN_SCROLL_BOXES
// The labs shown in a box that scrolls (their cell's output area is taller inside than shown) or
// whose verdict is cut at the output area's edge: "name: what".
() => [...document.querySelectorAll('__PANEL__ .course-lab')].flatMap(lab => {
    const name = [...lab.classList].find(c => c.startsWith('course-lab-')).slice(11);
    const area = lab.closest('.jp-Cell-outputArea');
    const found = [];
    if (area.scrollHeight > area.clientHeight + 1)
        found.push(`${name}: its output scrolls (${area.scrollHeight} px in a box ${area.clientHeight} px high)`);
    const box = area.getBoundingClientRect();
    for (const verdict of lab.querySelectorAll('.course-verdict')) {
        const v = verdict.getBoundingClientRect();
        if (v.height === 0 || v.top < box.top - 1 || v.bottom > box.bottom + 1)
            found.push(`${name}: its verdict is not in view within its output (${Math.round(v.top - box.top)}` +
                       `..${Math.round(v.bottom - box.top)} px in ${Math.round(box.height)})`);
    }
    return found;
})

// --- ORDER_OF_LAB
// Whether the lab's first control is above its plot (its bottom above the plot's top).
(lab) => {
    const first = [...lab.querySelectorAll('input, select, button, .noUi-handle')].find(el => el.offsetParent !== null);
    const image = lab.querySelector('img.course-figure-image');
    return !first || !image || first.getBoundingClientRect().bottom <= image.getBoundingClientRect().top + 1;
}

// --- PROGRESS_CELLS_OUT
// The progress tables' shown cells that reach past the notebook's view or their output: their text.
() => {
    const nb = __APP__.shell.currentWidget.content.node;
    const view = (nb.querySelector('.jp-WindowedPanel-outer') || nb).getBoundingClientRect();
    return [...document.querySelectorAll('__PANEL__ .course-progress-table :is(th, td)')]
        .filter(cell => cell.offsetParent !== null && cell.getClientRects().length)
        .filter(cell => {
            const output = cell.closest('.jp-OutputArea-output').getBoundingClientRect();
            const r = cell.getBoundingClientRect();
            return r.right > Math.min(view.right, output.right, window.innerWidth) + 1 || r.left < view.left - 1
                || cell.scrollWidth > cell.clientWidth + 1;
        })
        .map(cell => cell.innerText.trim().slice(0, 40));
}
