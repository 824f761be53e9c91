// The JavaScript tests/test_browser_access.py evaluates in the page (Playwright's evaluate and
// wait_for_function). Each snippet follows a line '// --- NAME'; __APP__ and __PANEL__ stand for
// JupyterLab's handle in the page and the selector of the notebook shown.

// --- FOCUSABLE
// The course's controls in `root` that Tab reaches, each marked with a data-key (a radio group
// counts once, as Tab stops on it once).
(root) => {
    const all = [...root.querySelectorAll('input, select, textarea, button, [tabindex], [contenteditable="true"]')];
    const usable = all.filter(el => !el.disabled && el.tabIndex >= 0 && el.offsetParent !== null
                                    && !el.closest('.course-access'));
    usable.forEach((el, i) => el.dataset.key = el.dataset.key || ('k' + Math.random().toString(36).slice(2)));
    // A radio group is one stop for Tab (the arrows choose inside it): keep one radio per group.
    const seen = new Set();
    return usable.filter(el => {
        if (el.type !== 'radio' || !el.name) return true;
        if (seen.has(el.name)) return false;
        seen.add(el.name);
        return true;
    }).map(el => el.type === 'radio' && el.name ? 'radio:' + el.name : el.dataset.key);
}

// --- ACTIVE
// The control that has focus, if it is in `root`: its key, whether its focus ring shows, and what
// it is.
(root) => {
    const el = document.activeElement;
    if (!el || !root.contains(el)) return null;
    const style = getComputedStyle(el);
    return {key: el.type === 'radio' && el.name ? 'radio:' + el.name : el.dataset.key,
            ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
            what: el.tagName + ' ' + (el.getAttribute('aria-labelledby') || el.textContent || el.type || '').slice(0, 40)};
}

// --- VALUE
// A control's value: checked and value for a check box or a radio button, else aria-valuenow or
// value.
el => el.type === 'checkbox' || el.type === 'radio' ? el.checked + ':' + el.value
                                                    : el.getAttribute('aria-valuenow') || el.value

// --- WHAT_HAS_FOCUS
// What has focus on the page, in a few words.
() => {
    const el = document.activeElement;
    return el ? (el.tagName + ' ' + (el.getAttribute('title') || el.getAttribute('aria-label') || el.className || '')).slice(0, 80)
              : 'nothing';
}

// --- VERDICT_AGREES
// The verdict's words once the plot's text alternative says the same (null until then).
([img, verdict]) => {
    const said = verdict.innerText.replace(/\s+/g, ' ').trim();
    return said && img.alt === said && img.getAttribute('role') !== 'presentation' ? said : null;
}

// --- FIT
// The width of each slider's track in `root`, and the words of labels, buttons, readouts and menu
// options that are cut off.
(root) => {
    const tracks = [], clipped = [];
    const ruler = document.createElement('canvas').getContext('2d');
    for (const slider of root.querySelectorAll('.widget-hslider')) {
        const label = slider.querySelector('.widget-label');
        tracks.push([label ? label.textContent : '?', slider.querySelector('.slider-container').getBoundingClientRect().width]);
    }
    const parts = '.widget-label, .widget-label-basic span, .widget-radio-box label, .jupyter-button, .widget-readout';
    for (const el of root.querySelectorAll(parts)) {
        if (el.offsetParent === null || !el.textContent.trim()) continue;
        if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
            clipped.push(el.textContent.trim());
    }
    for (const menu of root.querySelectorAll('select')) {
        const style = getComputedStyle(menu);
        ruler.font = style.font;
        const shown = menu.options[menu.selectedIndex];
        const room = menu.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        for (const option of menu.options)          // every option, shown in the closed menu
            if (ruler.measureText(option.text).width > room + 1) clipped.push(option.text);
    }
    return {tracks, clipped};
}

// --- AUDIT_ROOTS
// Mark the course's outermost elements in the notebook shown for axe (data-course-audit); return
// how many.
() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const ours = el => [...el.classList].some(c => c.startsWith('course-'));
    const roots = [...panel.querySelectorAll('[class*="course-"]')].filter(el => {
        if (!ours(el)) return false;
        for (let up = el.parentElement; up; up = up.parentElement) if (ours(up)) return false;
        return true;
    });
    document.querySelectorAll('[data-course-audit]').forEach(el => el.removeAttribute('data-course-audit'));
    roots.forEach(el => el.setAttribute('data-course-audit', ''));
    return roots.length;
}

// --- AXE_RUN
// axe-core's violations in `context` (its include and exclude selectors) with `options`, each with
// the elements it found.
async ([context, options]) => {
    const result = await axe.run(context, {...options, resultTypes: ['violations']});
    return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => n.target.join(' ') + '  ' + n.html.slice(0, 160))}));
}

// --- FILL_EXERCISE
// Put `source` in the cell of exercise `id`, as a learner types it; return the cell's index.
([id, source]) => {
    const cells = __APP__.shell.currentWidget.content.widgets;
    const i = cells.findIndex(c => (c.model.getMetadata('course') || {}).exercise === id);
    cells[i].model.sharedModel.setSource(source);
    return i;
}

// --- SPOKEN
// What a lab says: its verdict's aria-live, the verdict's words and the plot's text alternative.
(lab) => {
    const verdict = lab.querySelector('.course-verdict');
    const image = lab.querySelector('img.course-figure-image');
    return {live: verdict.querySelector('.widget-html-content').getAttribute('aria-live'),
            verdict: verdict.innerText.replace(/\s+/g, ' ').trim(), alt: image && image.alt};
}

// --- ANIMATED
// The course's elements that are animating.
() => document.getAnimations()
        .filter(a => a.effect && a.effect.target && a.effect.target.closest && a.effect.target.closest('.course-widget'))
        .map(a => a.effect.target.className)

// --- TRANSITIONS
// The first few of the course's elements that have a transition or an animation.
() => [...document.querySelectorAll('.course-widget *')]
        .filter(el => parseFloat(getComputedStyle(el).transitionDuration) > 0 || getComputedStyle(el).animationName !== 'none')
        .map(el => el.tagName + '.' + el.className).slice(0, 5)

// --- KERNEL_VALUE
// Run `code` quietly in the open notebook's kernel (no output, no prompt number, no history);
// return its reply, with the value of `expression`.
async ([code, expression]) => {
    const kernel = __APP__.shell.currentWidget.sessionContext.session.kernel;
    const future = kernel.requestExecute({code, silent: true, store_history: false,
                                          user_expressions: {value: expression}});
    const reply = await future.done;
    return reply.content;
}

// --- CELLS_WITH_COURSE_WIDGETS
// The indexes of the cells whose output holds a course widget.
() => __APP__.shell.currentWidget.content.widgets
    .map((cell, i) => cell.node.querySelector('.jp-OutputArea .course-widget') ? i : -1).filter(i => i >= 0)

// --- LABS_BACK
// `count` labs are back after a reload, every picture decoded, no widget missing or still loading.
(count) => {
    const outputs = [...document.querySelectorAll('__PANEL__ .jp-OutputArea-output')];
    if (outputs.some(o => /model not found|Loading widget/.test(o.textContent))) return false;
    const labs = [...document.querySelectorAll('__PANEL__ .course-lab')];
    return labs.length === count && labs.every(lab => [...lab.querySelectorAll('img.course-figure-image')]
        .every(img => img.complete && img.naturalWidth > 0));
}

// --- NOT_FOUND
// How many outputs of the notebook shown say a widget's model was not found.
() => [...document.querySelectorAll('__PANEL__ .jp-OutputArea-output')]
    .filter(o => /model not found/.test(o.textContent)).length
