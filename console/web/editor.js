// The SDL editor: a plain monospace textarea between a gutter of line
// numbers and a column of notes, both scrolled with it. setErrors puts the
// server's line:column errors beside their lines and in a list below; each
// item moves the caret to its place.
import { h, replace, uid } from './dom.js';

export function sdlEditor({ label = 'SDL', value = '', readOnly = false } = {}) {
  const id = uid('sdl');
  const listId = id + '-errors';
  const gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' });
  const notes = h('div', { class: 'notes', 'aria-hidden': 'true' });
  const area = h('textarea', {
    id, class: 'code', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    wrap: 'off', rows: readOnly ? undefined : 16, readonly: readOnly, 'aria-describedby': listId,
  });
  area.value = value;
  const list = h('ol', { id: listId, class: 'sdl-errors', 'aria-label': label + ' errors' });
  const frame = h('div', { class: 'editor' + (readOnly ? ' readonly' : '') }, gutter, area, notes);
  const el = h('div', { class: 'field' }, h('label', { for: id }, label), frame, list);
  let errors = []; // [{line, column, message}]

  function lines() { return area.value.split('\n').length; }

  function paint() {
    const byLine = new Map();
    for (const e of errors) if (e.line) byLine.set(e.line, [...(byLine.get(e.line) || []), e]);
    const n = Math.max(lines(), ...[...byLine.keys()]);
    const nums = [];
    const marks = [];
    for (let i = 1; i <= n; i++) {
      const es = byLine.get(i);
      nums.push(h('div', { class: es ? 'ln err' : 'ln' }, String(i)));
      marks.push(h('div', { class: 'note', title: es ? es.map((e) => e.message).join('\n') : undefined },
        es ? es.map((e) => `col ${e.column}: ${e.message}`).join(' · ') : '\u00a0'));
    }
    replace(gutter, nums);
    replace(notes, marks);
    if (readOnly) area.rows = Math.min(Math.max(n, 3), 40);
    sync();
  }

  function sync() {
    gutter.scrollTop = area.scrollTop;
    notes.scrollTop = area.scrollTop;
  }

  // goTo puts the caret at line:column (both from 1).
  function goTo(line, column) {
    const ls = area.value.split('\n');
    let pos = 0;
    for (let i = 0; i < line - 1 && i < ls.length; i++) pos += ls[i].length + 1;
    pos += Math.max(0, Math.min((column || 1) - 1, (ls[line - 1] || '').length));
    area.focus();
    area.setSelectionRange(pos, pos);
    const lh = parseFloat(getComputedStyle(area).lineHeight) || 20;
    area.scrollTop = Math.max(0, (line - 3) * lh);
    sync();
  }

  let lastCount = lines();
  area.addEventListener('input', () => {
    if (lines() !== lastCount) { lastCount = lines(); paint(); }
  });
  area.addEventListener('scroll', sync);
  // Tab indents instead of leaving the field; Escape then Tab leaves.
  let escaped = false;
  area.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') { escaped = true; return; }
    if (ev.key === 'Tab' && !ev.shiftKey && !escaped && !readOnly) {
      ev.preventDefault();
      area.setRangeText('  ', area.selectionStart, area.selectionEnd, 'end');
    }
    escaped = false;
  });

  paint();
  return {
    el,
    area,
    get value() { return area.value; },
    set value(v) { area.value = v; lastCount = lines(); paint(); },
    // setErrors takes the envelope's items: extensions.line and .column
    // when the server knows them.
    setErrors(items) {
      errors = (items || []).map((e) => {
        const line = e.extensions && e.extensions.line;
        const column = e.extensions && e.extensions.column;
        // The message repeats the place ("invalid schema: 3:10: …"),
        // which the line and column beside it already say.
        const message = line ? e.message.replace(`${line}:${column}: `, '') : e.message;
        return { line, column, message };
      });
      replace(list, errors.map((e) => h('li', {},
        e.line ? h('button', { type: 'button', class: 'link', onclick: () => goTo(e.line, e.column) },
          `Line ${e.line}, column ${e.column}`) : null,
        e.line ? ': ' : '', e.message)));
      paint();
    },
  };
}
