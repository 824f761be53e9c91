// The JavaScript tests/test_report_classroom.py evaluates in the page. Each snippet follows a line
// '// --- NAME'.

// --- PRINTED_HEATMAP
// How the dashboard's heatmap prints: its box's overflow and height limit, its rows, its tallest
// name and a line's height, whether anything is cut off, and whether a cell's colours print as they
// are.
() => {
    const box = document.querySelector('.scroll'), style = getComputedStyle(box);
    const names = [...document.querySelectorAll('.heat tbody th')];
    const line = parseFloat(getComputedStyle(names[0]).lineHeight) || 14;
    const cell = document.querySelector('.heat td.passed, .heat td[class]');
    return {overflow: style.overflowY, maxHeight: style.maxHeight, rows: names.length,
            tallest: Math.max(...names.map(n => n.getBoundingClientRect().height)), line,
            clipped: box.scrollHeight > box.clientHeight + 1 || box.scrollWidth > box.clientWidth + 1,
            adjust: getComputedStyle(cell).printColorAdjust || getComputedStyle(cell).webkitPrintColorAdjust};
}
