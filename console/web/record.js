// One record: a form generated from the schema that creates a record or
// edits one (upsert), and the record's trash, untrash and delete; who may
// see it (its owner, the AccessRight grants that cover it and its type's
// @access rules, read from the release's SDL through the admin API). Plain
// fields get typed controls; a reference is the referenced record's id
// with a link to it; a list of references is a list of links, each with a
// Remove button, and a field to add an id.
import { admin, describe, fileBlob, graphql, tokenOf } from './api.js';
import { alert, field, h, replace, report, saveBlob, status } from './dom.js';
import { RULE_OPS, accessRules, byID, columns, quote } from './model.js';

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
    edges { node { ... on ${type} { ${cols.map((c) => c.sel).join(' ')}${type === 'File' ? ' url { path }' : ''} core { id createdBy created updated trashed } } } }
  }
}`;
  const r = await graphql(domain, token, doc, { arcql: byID(id) });
  const err = alert();
  if (!r.ok) { replace(el, h('h2', {}, `${type} ${id}`), back, err); report(err, describe(r), true); return; }
  const node = r.body.data.find.edges[0] && r.body.data.find.edges[0].node;
  if (!node) { replace(el, h('h2', {}, `${type} ${id}`), back, h('p', {}, `There is no ${type} ${id}.`)); return; }

  const names = await usernames(domain, token, [node.core.createdBy]);
  const facts = h('dl', { class: 'facts' });
  const showFacts = () => replace(facts,
    h('dt', {}, 'core.id'), h('dd', { class: 'code' }, node.core.id),
    h('dt', {}, 'owner'), h('dd', {}, ownerCell(domain, node.core.createdBy, names)),
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
  const access = h('section', { class: 'card', 'aria-label': `Access to ${type} ${id}` }, h('h3', {}, 'Who may see it'), loading());
  replace(el, h('h2', {}, `${type} ${id}`), back, facts, access, shown, actions(domain, token, type, node, showFacts, el, back));
  accessView(access, domain, token, type, node, names);
}

function loading() { return h('p', { 'aria-busy': 'true' }, 'Loading…'); }

// refLabel is a reference's link: the referenced record's label field
// (model.js labelField) when it has one, else its id.
export function refLabel(domain, col, v) {
  if (!v || !v.core || !v.core.id) return '—';
  const text = (col.label && v[col.label]) || v.core.id;
  return h('a', { href: recordHref(domain, col.ref, v.core.id), class: text === v.core.id ? 'code' : undefined, title: v.core.id }, String(text));
}

// usernames answers the usernames of the accounts ids (those that have
// one) as a Map, read 25 at a time; empty when they cannot be read.
export async function usernames(domain, token, ids) {
  const names = new Map();
  const want = [...new Set(ids.filter(Boolean))];
  for (let i = 0; i < want.length; i += 25) {
    const part = want.slice(i, i + 25);
    const r = await graphql(domain, token, `query CoreConsoleUsernames($arcql: String!, $first: Int) {
  find(type: Account, arcql: $arcql, first: $first) { edges { node { ... on Account { username core { id } } } } }
}`, { arcql: part.map(byID).join(' OR '), first: part.length });
    if (!r.ok) return names;
    for (const e of r.body.data.find.edges) if (e.node.username) names.set(e.node.core.id, e.node.username);
  }
  return names;
}

// ownerCell is a record's owner (core.createdBy): the account's username
// where it has one, else its id, linked to the Account record.
export function ownerCell(domain, id, names) {
  if (!id) return '—';
  const name = names.get(id);
  return h('a', { href: recordHref(domain, 'Account', id), class: name ? undefined : 'code', title: id }, name || id);
}

const GRANTS = `query CoreConsoleGrants($arcql: String!) {
  find(type: AccessRight, arcql: $arcql, first: 100) {
    edges { node { ... on AccessRight { resource resourceType operationType operation fields permissionType approved startDate endDate
      resourceOwnerId membersSourceType membersSourceField membersSourceId members { username core { id } } core { id } } } }
    pageInfo { hasNextPage }
  }
}`;

// accessView lists who may see node: its owner, the grants that cover it
// (their resourceType is its type or *, their resource its id or *; a *
// of an RBP grant covers only the records of resourceOwnerId) and the
// @access rules of its type.
async function accessView(el, domain, token, type, node, names) {
  const id = node.core.id;
  const owner = node.core.createdBy;
  const [g, rules] = await Promise.all([
    graphql(domain, token, GRANTS, { arcql: `(resourceType = ${quote(type)} OR resourceType = '*') AND (resource = ${quote(id)} OR resource = '*')` }),
    typeRules(domain, type),
  ]);
  const parts = [h('p', {}, 'Owner: ', ownerCell(domain, owner, names), ' (the owner reads and changes it; the instance token and the console reach every record).')];

  parts.push(h('h4', {}, 'Grants'));
  if (!g.ok) parts.push(h('p', { class: 'alert error', role: 'alert' }, 'Grants not read: ' + describe(g)));
  else {
    const grants = g.body.data.find.edges.map((e) => e.node)
      .filter((a) => !(a.permissionType === 'RBP' && a.resource === '*' && a.resourceOwnerId && a.resourceOwnerId !== owner));
    if (grants.length === 0) parts.push(h('p', {}, 'No AccessRight grant covers this record.'));
    else {
      parts.push(h('div', { class: 'scroll' }, h('table', { class: 'grants' },
        h('caption', {}, `Grants covering ${type} ${id}`),
        h('thead', {}, h('tr', {}, ['Grant', 'Operation', 'Permission', 'To', 'Resource', 'Active'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, grants.map((a) => h('tr', {},
          h('th', { scope: 'row' }, h('a', { href: recordHref(domain, 'AccessRight', a.core.id), class: 'code' }, a.core.id)),
          h('td', { class: 'code' }, `${a.operationType}.${a.operation}${a.fields ? ` (${a.fields})` : ''}`),
          h('td', {}, a.permissionType),
          h('td', {}, members(domain, a)),
          h('td', { class: 'code' }, a.resource === '*' ? `every ${a.resourceType}${a.permissionType === 'RBP' ? ' of its owner' : ''}` : a.resource),
          h('td', {}, active(a))))))));
      if (g.body.data.find.pageInfo.hasNextPage) parts.push(h('p', {}, 'The first 100 grants are shown.'));
    }
  }

  if (rules) {
    parts.push(h('h4', {}, `Rules of ${type} (@access)`),
      h('dl', { class: 'facts rules' }, RULE_OPS.filter((op) => rules[op] !== undefined)
        .flatMap((op) => [h('dt', {}, op), h('dd', { class: 'code' }, rules[op])])));
  }
  replace(el, h('h3', {}, 'Who may see it'), parts);
}

// members words whom a grant is to.
function members(domain, a) {
  const out = [];
  for (const m of a.members || []) {
    if (out.length) out.push(', ');
    out.push(h('a', { href: recordHref(domain, 'Account', m.core.id), title: m.core.id }, m.username || m.core.id));
  }
  if (a.membersSourceType) {
    if (out.length) out.push('; ');
    out.push(h('span', {}, 'the members in ',
      h('a', { href: recordHref(domain, a.membersSourceType, a.membersSourceId || ''), class: 'code' }, `${a.membersSourceType} ${a.membersSourceId || ''}`),
      `.${a.membersSourceField || ''}`));
  }
  return out.length ? h('span', {}, out) : '—';
}

function active(a) {
  if (a.approved === false) return 'no (not approved)';
  if (a.startDate || a.endDate) return `${a.startDate || '…'} – ${a.endDate || '…'}`;
  return 'yes';
}

// releases caches the SDL of app/release: a release never changes.
const releases = new Map();

// typeRules answers the @access rules of type in the release domain runs,
// read through the admin API; null when it has none or they cannot be read.
async function typeRules(domain, type) {
  const inst = await admin('GET', `/instances/${encodeURIComponent(domain)}`);
  if (!inst.ok) return null;
  const key = `${inst.body.app}/${inst.body.release}`;
  if (!releases.has(key)) {
    const r = await admin('GET', `/apps/${encodeURIComponent(inst.body.app)}/releases/${encodeURIComponent(inst.body.release)}`);
    if (!r.ok) return null;
    releases.set(key, r.body.schema || '');
  }
  return accessRules(releases.get(key), type);
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
  const controls = cols.map((c) => control(s, domain, c, node ? node[c.name] : null, token, type));
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
function control(s, domain, col, value, token, type) {
  if (col.ref && col.list) return refList(domain, col, value);
  if (col.ref) return refOne(domain, col, value, token);
  if (col.list) return scalarList(col, value);
  return scalar(s, col, value, choices(s, type, col.name));
}

// choices are the values a String field of a built-in type takes, offered
// as a select: a grant's type, operation type and operation.
function choices(s, type, name) {
  if (type !== 'AccessRight') return null;
  if (name === 'resourceType') return ['*', ...s.recordTypes];
  if (name === 'operationType') return ['Query', 'Mutation', '*'];
  if (name === 'operation') return ['*', 'get', 'find', 'upsert', 'delete', 'trash', 'untrash', 'link', 'unlink'];
  return null;
}

function scalar(s, col, value, offered = null) {
  let input;
  if (col.kind === 'Boolean' || col.enumType || offered) {
    const values = offered ? [...offered] : col.kind === 'Boolean' ? ['true', 'false'] : ((s.types.get(col.kind) || {}).enumValues || []).map((v) => v.name);
    // A stored value the list lacks is kept as a choice.
    if (value !== null && value !== undefined && !values.includes(String(value))) values.push(String(value));
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
  const link = h('span', { class: 'reflink' });
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
    const res = await fetch(new URL('../upload/', location.href), { method: 'POST', headers: { 'core-domain': domain, authorization: await tokenOf(token) }, body: form });
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

// filePreview shows a File: an image's picture, and a link that
// downloads its content.
export function filePreview(node, token) {
  return h('div', { class: 'card' }, h('h3', {}, node.name || 'File'),
    isImage(node) ? fileImage(node, token, '300x300f', { alt: `Preview of ${node.name}` }) : null,
    h('p', {}, fileDownload(node, token, `Download ${node.name} (${node.size} bytes, ${node.type})`)));
}

// fileImage is an <img> of a File's picture (thumb: a thumbnail size),
// fetched with token (an instanceAuth) in a header and shown from a blob:
// URL: the instance's session is never in a URL (an <img src> cannot send
// a header).
export function fileImage(node, token, thumb, attrs) {
  const img = h('img', attrs);
  fileBlob(token, node.url.path, thumb).then((r) => {
    if (r.ok) img.src = URL.createObjectURL(r.blob);
    else img.title = `Not shown: ${r.message}`;
  });
  return img;
}

// fileDownload is a link that fetches a File's content the same way and
// saves it under the File's name.
export function fileDownload(node, token, text, attrs = {}) {
  const a = h('a', { ...attrs, href: '#', onclick: async (ev) => {
    ev.preventDefault();
    a.setAttribute('aria-busy', 'true');
    const r = await fileBlob(token, node.url.path);
    a.removeAttribute('aria-busy');
    if (r.ok) saveBlob(r.blob, node.name || 'file');
    else a.title = `Not downloaded: ${r.message}`;
  } }, text);
  return a;
}

// isImage: the service makes thumbnails of the File's type.
export function isImage(node) { return /^image\/(png|jpeg|gif|webp)/.test(node.type || ''); }
