// The JavaScript tests/test_report_dashboard.py evaluates in the page. Each snippet follows a line
// '// --- NAME'.

// --- CELL_COLOURS
// Every pair of text and background colours a cell of the heatmap or of its legend shows, as
// 'color|background'.
() => [...new Set([...document.querySelectorAll('.legend .cell, table.heat tbody td[class^="s-"]')]
    .map(el => {
        const s = getComputedStyle(el);
        return s.color + '|' + s.backgroundColor;
    }))]
