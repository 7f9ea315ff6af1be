// One record: a form generated from the schema that creates a record or
// edits one (upsert), and the record's trash, untrash and delete. Plain
// fields get typed controls; a reference is the referenced record's id
// with a link to it; a list of references is a list of links, each with a
// Remove button, and a field to add an id.
import { describe, graphql } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';
import { byID, columns } from './model.js';

// recordHref is the hash route of one record in the data browser.
export function recordHref(domain, type, id) {
  return `#/data/${encodeURIComponent(domain)}/${encodeURIComponent(type)}/${encodeURIComponent(id)}`;
}

// recordView shows the record type/id of domain (trashed or not) in el.
export async function recordView(el, domain, token, s, type, id) {
  const cols = columns(s, type);
  const back = h('p', {}, h('a', { href: `#/data/${encodeURIComponent(domain)}/${encodeURIComponent(type)}` }, `← ${type} records`));
  replace(el, h('h2', {}, `${type} ${id}`), back, h('p', { 'aria-busy': 'true' }, 'Loading…'));
  const doc = `query CoreConsoleRecord($arcql: String!) {
  find(type: ${type}, arcql: $arcql, first: 1, includeTrashed: true) {
    edges { node { ... on ${type} { ${cols.map((c) => c.sel).join(' ')}${type === 'File' ? ' url { path }' : ''} core { id created updated trashed } } } }
  }
}`;
  const r = await graphql(domain, token, doc, { arcql: byID(id) });
  const err = alert();
  if (!r.ok) { replace(el, h('h2', {}, `${type} ${id}`), back, err); report(err, describe(r), true); return; }
  const node = r.body.data.find.edges[0] && r.body.data.find.edges[0].node;
  if (!node) { replace(el, h('h2', {}, `${type} ${id}`), back, h('p', {}, `There is no ${type} ${id}.`)); return; }

  const facts = h('dl', { class: 'facts' });
  const showFacts = () => replace(facts,
    h('dt', {}, 'core.id'), h('dd', { class: 'code' }, node.core.id),
    h('dt', {}, 'created'), h('dd', {}, node.core.created || '—'),
    h('dt', {}, 'updated'), h('dd', {}, node.core.updated || '—'),
    h('dt', {}, 'trashed'), h('dd', {}, node.core.trashed || 'no'));
  showFacts();
  const form = recordForm(domain, token, s, type, node, (saved) => {
    node.core.updated = saved.updated || node.core.updated;
    showFacts();
  });
  // A File is made by uploads: it is shown, not edited.
  const shown = type === 'File' ? filePreview(node, token) : form;
  replace(el, h('h2', {}, `${type} ${id}`), back, facts, shown, actions(domain, token, type, node, showFacts, el, back));
}

// actions are the record's trash or untrash and delete, with the offer to
// clear list references when the server refuses a delete for them.
function actions(domain, token, type, node, showFacts, el, back) {
  const msg = status();
  const err = alert();
  const id = node.core.id;
  const write = (op, extra = '') => graphql(domain, token,
    `mutation CoreConsole${op}($arcql: String!) { ${op}(type: ${type}, arcql: $arcql${extra}) }`, { arcql: byID(id) });
  const trash = h('button', { type: 'button', onclick: async () => {
    const op = node.core.trashed ? 'untrash' : 'trash';
    report(msg, ''); report(err, '');
    trash.disabled = true;
    const r = await write(op);
    trash.disabled = false;
    if (!r.ok) { report(err, describe(r), true); return; }
    node.core.trashed = op === 'trash' ? new Date().toISOString() : null;
    label();
    showFacts();
    report(msg, op === 'trash' ? `Trashed ${type} ${id}.` : `Restored ${type} ${id}.`);
  } });
  const label = () => replace(trash, node.core.trashed ? `Untrash ${type}` : `Trash ${type}`);
  label();
  const offer = h('div');
  const del = async (clear) => {
    report(msg, ''); report(err, ''); replace(offer);
    const r = await write('delete', clear ? ', clearArrayReferences: true' : '');
    if (!r.ok) {
      report(err, 'Not deleted: ' + describe(r), true);
      if (!clear && r.errors.some((e) => e.extensions && e.extensions.code === 'REFERENCED')) {
        replace(offer, h('p', {}, 'Lists of other records hold this one. Deleting it anyway removes it from those lists.'),
          h('button', { type: 'button', class: 'danger', onclick: () => del(true) }, 'Delete and clear list references'));
      }
      return;
    }
    const done = status();
    replace(el, h('h2', {}, `${type} ${id}`), back, done);
    report(done, `Deleted ${type} ${id}.`);
  };
  return h('section', { class: 'card', 'aria-label': `Actions on ${type} ${id}` },
    h('h3', {}, 'Trash or delete'),
    h('p', {}, 'A trashed record is hidden from find, get and references until it is untrashed; a deleted one is gone.'),
    h('div', { class: 'inline' }, trash,
      h('button', { type: 'button', class: 'danger', onclick: () => del(false) }, `Delete ${type}`)),
    msg, err, offer);
}

// recordForm creates a record of type (node null) or edits node: an
// upsert of the fields that changed (an emptied field is cleared).
export function recordForm(domain, token, s, type, node, onSaved) {
  const editing = !!node;
  const cols = columns(s, type).filter((c) => c.writable && c.kind !== 'Json');
  const idInput = h('input', { name: 'core.id', autocomplete: 'off', spellcheck: 'false', class: 'code' });
  const controls = cols.map((c) => control(s, domain, c, node ? node[c.name] : null, token));
  const msg = status();
  const err = alert();
  const button = h('button', { type: 'submit' }, editing ? `Save ${type}` : `Create ${type}`);
  return h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    const rec = {};
    try {
      for (const c of controls) {
        const v = c.read();
        if (editing ? JSON.stringify(v) !== JSON.stringify(c.initial) : v !== null) rec[c.col.name] = v;
      }
    } catch (e) { report(err, e.message, true); return; }
    if (editing) rec.core = { id: node.core.id };
    else if (idInput.value.trim()) rec.core = { id: idInput.value.trim() };
    button.disabled = true;
    const r = await graphql(domain, token, 'mutation CoreConsoleUpsert($v: CoreUpsertInputUnion!) { upsert(values: $v) { id updated } }', { v: { [type]: [rec] } });
    button.disabled = false;
    if (!r.ok) { report(err, (editing ? 'Not saved: ' : 'Not created: ') + describe(r), true); return; }
    const saved = r.body.data.upsert[0] || {};
    if (editing) {
      for (const c of controls) c.initial = c.read();
      report(msg, `Saved ${type} ${saved.id}.`);
    } else {
      for (const c of controls) c.reset();
      idInput.value = '';
      report(msg, `Created ${type} ${saved.id}.`);
    }
    onSaved(saved);
  } },
  h('h3', {}, editing ? `Edit ${type}` : `New ${type}`),
  editing ? null : field('core.id (optional)', idInput, 'Left empty, the server makes one.'),
  controls.length ? h('div', { class: 'grid' }, controls.map((c) => c.el)) : h('p', {}, 'This type has no fields to fill in.'),
  button, msg, err);
}

// control builds the input of one field: {col, el, read(), reset(),
// initial}. read answers the value to send (null when empty) or throws
// saying what is wrong.
function control(s, domain, col, value, token) {
  if (col.ref && col.list) return refList(domain, col, value);
  if (col.ref) return refOne(domain, col, value, token);
  if (col.list) return scalarList(col, value);
  return scalar(s, col, value);
}

function scalar(s, col, value) {
  let input;
  if (col.kind === 'Boolean' || col.enumType) {
    const values = col.kind === 'Boolean' ? ['true', 'false'] : ((s.types.get(col.kind) || {}).enumValues || []).map((v) => v.name);
    input = h('select', {}, h('option', { value: '' }, '—'), values.map((v) => h('option', { value: v }, v)));
  } else if (col.kind === 'Int') input = h('input', { type: 'number', step: '1', inputmode: 'numeric' });
  else if (col.kind === 'Float') input = h('input', { type: 'number', step: 'any', inputmode: 'decimal' });
  else input = h('input', { type: col.kind === 'Email' ? 'email' : 'text', autocomplete: 'off' });
  input.name = col.name;
  const shown = value === null || value === undefined ? '' : String(value);
  input.value = shown;
  const c = {
    col,
    el: field(`${col.name} (${col.kind})`, input),
    read: () => parse(col, input.value),
    reset: () => { input.value = ''; },
  };
  c.initial = c.read();
  return c;
}

function parse(col, text) {
  if (text === '') return null;
  if (col.kind === 'Int') {
    const n = Number(text);
    if (!Number.isInteger(n)) throw new Error(`${col.name}: ${text} is not a whole number`);
    return n;
  }
  if (col.kind === 'Float') {
    const n = Number(text);
    if (!Number.isFinite(n)) throw new Error(`${col.name}: ${text} is not a number`);
    return n;
  }
  if (col.kind === 'Boolean') return text === 'true';
  return text;
}

// scalarList is a list of plain values, one a line.
function scalarList(col, value) {
  const input = h('textarea', { name: col.name, rows: 3, spellcheck: 'false' });
  input.value = (value || []).join('\n');
  const c = {
    col,
    el: field(`${col.name} (list of ${col.kind})`, input, 'One a line.'),
    read: () => {
      const lines = input.value.split('\n').map((l) => l.trim()).filter(Boolean);
      return lines.length ? lines.map((l) => parse(col, l)) : null;
    },
    reset: () => { input.value = ''; },
  };
  c.initial = c.read();
  return c;
}

// refOne is a reference: the id of the referenced record, and a link to it.
function refOne(domain, col, value, token) {
  const input = h('input', { name: col.name, autocomplete: 'off', spellcheck: 'false', class: 'code' });
  input.value = (value && value.core && value.core.id) || '';
  const link = h('span');
  const showLink = () => {
    const id = input.value.trim();
    replace(link, id ? h('a', { href: recordHref(domain, col.ref, id) }, `Open ${col.ref} ${id}`) : '');
  };
  input.addEventListener('input', showLink);
  showLink();
  // A File reference may be uploaded from here: the new file's id fills
  // the field.
  const upload = col.ref === 'File' ? uploadInput(domain, token, col.name, (rec) => { input.value = rec.core.id; showLink(); }) : null;
  const c = {
    col,
    el: h('div', { class: 'refone' }, field(`${col.name} (${col.ref} id)`, input), upload, link),
    read: () => (input.value.trim() ? { core: { id: input.value.trim() } } : null),
    reset: () => { input.value = ''; showLink(); },
  };
  c.initial = c.read();
  return c;
}

// refList is a list of references: links with a Remove button each, and a
// field that adds an id.
function refList(domain, col, value) {
  let ids = (value || []).map((v) => v.core.id);
  const list = h('ul', { class: 'refs' });
  const add = h('input', { autocomplete: 'off', spellcheck: 'false', class: 'code' });
  const show = () => replace(list, ids.length === 0 ? h('li', {}, 'None.') : ids.map((id, i) => h('li', { class: 'inline' },
    h('a', { href: recordHref(domain, col.ref, id), class: 'code' }, id),
    h('button', { type: 'button', 'aria-label': `Remove ${id} from ${col.name}`, onclick: () => { ids.splice(i, 1); show(); add.focus(); } }, 'Remove'))));
  const addID = () => {
    const id = add.value.trim();
    if (id && !ids.includes(id)) ids.push(id);
    add.value = '';
    show();
  };
  add.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); addID(); } });
  show();
  const c = {
    col,
    el: h('fieldset', { class: 'reflist' }, h('legend', {}, `${col.name} (list of ${col.ref})`), list,
      h('div', { class: 'inline' }, field(`Add a ${col.ref} id to ${col.name}`, add),
        h('button', { type: 'button', 'aria-label': `Add to ${col.name}`, onclick: addID }, 'Add'))),
    read: () => (ids.length ? ids.map((id) => ({ core: { id } })) : null),
    reset: () => { ids = []; show(); },
  };
  c.initial = c.read();
  return c;
}

// uploadInput is a file input that uploads the chosen file to the
// instance (POST /upload/) and hands the created File record to done.
function uploadInput(domain, token, name, done) {
  const err = alert();
  const input = h('input', { type: 'file', 'aria-label': `Upload a file for ${name}`, onchange: async () => {
    report(err, '');
    const f = input.files[0];
    if (!f) return;
    const form = new FormData();
    form.append('0', f, f.name);
    const res = await fetch(new URL('../upload/', location.href), { method: 'POST', headers: { 'core-domain': domain, authorization: token || '' }, body: form });
    const body = await res.json().catch(() => null);
    if (res.status !== 201 || !Array.isArray(body)) {
      const e = body && body.errors && body.errors[0];
      report(err, `Not uploaded: ${e ? e.message : res.status}`, true);
      return;
    }
    done(body[0]);
  } });
  return h('div', {}, input, err);
}

// filePreview shows a File: an image's picture, and a link to its
// content (the token in ?token=, as an <img> cannot send a header).
export function filePreview(node, token) {
  const url = fileURL(node, token);
  return h('div', { class: 'card' }, h('h3', {}, node.name || 'File'),
    isImage(node) ? h('img', { src: `${url}&thumb=300x300f`, alt: `Preview of ${node.name}` }) : null,
    h('p', {}, h('a', { href: url, download: node.name }, `Download ${node.name} (${node.size} bytes, ${node.type})`)));
}

// fileURL is a File's download address, the token in ?token=.
export function fileURL(node, token) {
  return `${new URL('..' + node.url.path, location.href)}?token=${encodeURIComponent(token || '')}`;
}

// isImage: the service makes thumbnails of the File's type.
export function isImage(node) { return /^image\/(png|jpeg|gif|webp)/.test(node.type || ''); }
