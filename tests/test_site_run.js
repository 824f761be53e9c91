// The JavaScript tests/test_site_run.py evaluates in the page. Each snippet follows a line
// '// --- NAME'; __APP__ stands for JupyterLab's handle in the page.

// --- SAVED_CELLS
// The [type, source] of every cell of each notebook at `paths` in the drive.
async paths => Promise.all(paths.map(async p =>
    (await __APP__.serviceManager.contents.get(p, {content: true})).content.cells
        .map(c => [c.cell_type, c.source])))
