// The JavaScript tests/test_browser_learner_path.py evaluates in the page. Each snippet follows a
// line '// --- NAME'; __APP__ stands for JupyterLab's handle in the page, __NB__ for the open
// notebook.

// --- CELL_INDEX
// The index of the code cell of `exercise`, or else of the first code cell whose text starts with
// `source`.
([exercise, source]) => __NB__.widgets.findIndex(c => c.model.type === 'code' && (exercise
    ? (c.model.getMetadata('course') || {}).exercise === exercise
    : c.model.sharedModel.getSource().startsWith(source)))

// --- RUN_CELL
// Make cell `i` the active one and the only one selected, clear its number and run it (as
// Ctrl+Enter does).
async i => {
    __NB__.activeCellIndex = i;
    __NB__.deselectAll();
    __NB__.widgets[i].model.executionCount = null;
    await __APP__.commands.execute('notebook:run-cell');
}

// --- RESTART_NOTICE
// What a lab shows once its kernel has restarted: the words before it, and those of any part inside
// it.
el => ({root: getComputedStyle(el, '::before').content,
        inside: [...el.querySelectorAll('.jupyter-widgets-disconnected')]
                .map(c => getComputedStyle(c, '::before').content).filter(c => c !== 'none')})
