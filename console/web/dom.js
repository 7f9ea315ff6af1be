// Tiny DOM helpers: h builds an element, text goes in as text (never as
// HTML), so what the server answers is shown, not run.

// h(tag, attrs, ...children): attrs' on* values are listeners, true/false
// set or leave out a boolean attribute, everything else is an attribute.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace empties el and puts children in it.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// field is a label and its control, tied by id.
export function field(label, control, hint) {
  const id = control.id || (control.id = uid(label));
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('small', {}, hint) : null);
}

let n = 0;
export function uid(prefix) {
  n += 1;
  return String(prefix).toLowerCase().replace(/[^a-z0-9]+/g, '-') + '-' + n;
}

// status and alert are the live regions a view reports in.
export function status() { return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }); }
export function alert() { return h('div', { class: 'alert', role: 'alert' }); }

// report shows a message (ok) or the server's errors in region.
export function report(region, message, isError = false) {
  region.classList.toggle('error', isError);
  region.classList.toggle('ok', !isError && !!message);
  replace(region, message || '');
}

// size words a byte count as people read it.
export function size(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  for (; v >= 1024 && i < units.length - 1; i++) v /= 1024;
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

// saveBlob hands blob to the browser as a download named name.
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
