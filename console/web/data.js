// The data browser: an instance's record types (from introspection through
// /graphql, with the instance token the person gives), a page of records
// of one type with an ArcQL filter and cursor paging, and a form that
// creates a record. Everything goes through the instance's own API and
// rules.
import { admin, describe, graphql, session } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';

const BUILTIN = new Set(['AccessRight', 'Account', 'URL', 'Webhook']);
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

const INTROSPECT = `query CoreConsoleSchema {
  __type(name: "CoreMutationType") { enumValues { name } }
  __schema { types { name kind
    fields { name type { ...T } }
    inputFields { name type { ...T } }
    enumValues { name } } }
}
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

// schemas caches an instance's introspection by domain and token.
const schemas = new Map();

export async function dataView(main, domain, type, heading) {
  if (!domain) return chooseInstance(main, heading);
  heading(`Data of ${domain}`);
  const tokenInput = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', value: session.instanceToken(domain) });
  const err = alert();
  const body = h('div');
  const form = h('form', { class: 'card inline-form', onsubmit: (ev) => {
    ev.preventDefault();
    session.setInstanceToken(domain, tokenInput.value.trim());
    schemas.delete(domain);
    load();
  } }, field('Instance token', tokenInput, 'The token shown when the instance was created (or rotated), or an account session token.'),
  h('button', { type: 'submit' }, 'Use token'), err);
  main.append(h('p', {}, h('a', { href: '#/instances' }, '← Instances')), form, body);

  async function load() {
    report(err, '');
    const token = session.instanceToken(domain);
    if (!token) { replace(body, h('p', {}, 'Enter the instance token to browse its records.')); return; }
    replace(body, h('p', { 'aria-busy': 'true' }, 'Loading the schema…'));
    let s = schemas.get(domain);
    if (!s || s.token !== token) {
      const r = await graphql(domain, token, INTROSPECT);
      if (!r.ok) { replace(body); report(err, describe(r), true); return; }
      s = { token, ...model(r.body.data) };
      schemas.set(domain, s);
    }
    const names = s.recordTypes;
    const current = names.includes(type) ? type : '';
    const typesNav = h('nav', { class: 'types', 'aria-label': 'Record types' }, h('h2', {}, 'Record types'),
      h('ul', {}, names.map((n) => h('li', {}, h('a', {
        href: `#/data/${encodeURIComponent(domain)}/${encodeURIComponent(n)}`,
        'aria-current': n === current ? 'page' : undefined,
      }, n, BUILTIN.has(n) ? h('small', {}, ' built-in') : null)))));
    const records = h('div', { class: 'records' });
    replace(body, h('div', { class: 'browser' }, typesNav, records));
    if (current) recordsView(records, domain, token, s, current);
    else records.append(h('p', {}, 'Choose a record type.'));
  }
  load();
}

async function chooseInstance(main, heading) {
  heading('Data');
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  main.append(list);
  const r = await admin('GET', '/instances');
  list.removeAttribute('aria-busy');
  if (!r.ok) { replace(list, h('p', { class: 'alert error', role: 'alert' }, describe(r))); return; }
  if (r.body.instances.length === 0) { replace(list, h('p', {}, 'No instances yet.')); return; }
  replace(list, h('p', {}, 'Choose an instance:'), h('ul', {}, r.body.instances.map((i) => h('li', {},
    h('a', { href: `#/data/${encodeURIComponent(i.domain)}` }, i.domain), ` (${i.app}/${i.release})`))));
}

// model keeps what the browser needs from an introspection answer.
function model(data) {
  const types = new Map(data.__schema.types.map((t) => [t.name, t]));
  const recordTypes = data.__type.enumValues.map((v) => v.name).filter((n) => NAME.test(n));
  recordTypes.sort((a, b) => (BUILTIN.has(a) - BUILTIN.has(b)) || a.localeCompare(b));
  return { types, recordTypes };
}

// unwrap gives a type reference's named type and whether it is a list.
function unwrap(t) {
  let list = false;
  while (t && (t.kind === 'NON_NULL' || t.kind === 'LIST')) { if (t.kind === 'LIST') list = true; t = t.ofType; }
  return { kind: t && t.kind, name: t && t.name, list };
}

// columns are the fields a table shows: scalars and enums as they are,
// references as the referenced record's id (lists: how many).
function columns(s, type) {
  const t = s.types.get(type);
  const cols = [];
  for (const f of (t && t.fields) || []) {
    if (f.name === 'core' || !NAME.test(f.name)) continue;
    const u = unwrap(f.type);
    if (u.kind === 'SCALAR' || u.kind === 'ENUM') cols.push({ name: f.name, sel: f.name, ref: false, list: u.list });
    else if (u.kind === 'OBJECT' && hasCore(s, u.name)) cols.push({ name: f.name, sel: `${f.name} { core { id } }`, ref: true, list: u.list });
  }
  return cols;
}

function hasCore(s, name) {
  const t = s.types.get(name);
  return !!(t && t.fields && t.fields.some((f) => f.name === 'core'));
}

function cell(col, v) {
  if (v === null || v === undefined) return '—';
  if (col.ref) return col.list ? `${v.length} record${v.length === 1 ? '' : 's'}` : (v.core && v.core.id) || '—';
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function recordsView(el, domain, token, s, type) {
  const cols = columns(s, type);
  const filter = h('input', { name: 'arcql', value: '*', autocomplete: 'off', spellcheck: 'false', class: 'code' });
  const trashed = h('input', { type: 'checkbox', name: 'includeTrashed' });
  const size = h('select', { name: 'first' }, [10, 25, 100].map((n) => h('option', { value: n }, String(n))));
  const err = alert();
  const table = h('div', { class: 'scroll' });
  const pageLabel = h('span', { class: 'page', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', disabled: true }, 'Previous page');
  const next = h('button', { type: 'button', disabled: true }, 'Next page');
  let stack = []; // the after cursors of the pages before this one
  let after = null;
  let info = null;

  const doc = `query CoreConsoleFind($arcql: String!, $first: Int, $after: String, $trashed: Boolean) {
  find(type: ${type}, arcql: $arcql, first: $first, after: $after, includeTrashed: $trashed) {
    edges { cursor node { ... on ${type} { ${cols.map((c) => c.sel).join(' ')} core { id created updated trashed } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

  // Only the latest request's answer is shown: one that an earlier,
  // slower request would otherwise overwrite.
  let latest = 0;
  async function fetchPage() {
    const mine = ++latest;
    report(err, '');
    table.setAttribute('aria-busy', 'true');
    const r = await graphql(domain, token, doc, { arcql: filter.value, first: Number(size.value), after, trashed: trashed.checked });
    if (mine !== latest) return;
    table.removeAttribute('aria-busy');
    if (!r.ok) { report(err, describe(r), true); replace(table); info = null; paging(); return; }
    const conn = r.body.data.find;
    info = conn.pageInfo;
    const showTrashed = trashed.checked;
    replace(table, h('table', {},
      h('caption', {}, `${type} records`),
      h('thead', {}, h('tr', {}, ['core.id', ...cols.map((c) => c.name), 'created', 'updated', showTrashed ? 'trashed' : null]
        .filter(Boolean).map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, conn.edges.length === 0
        ? h('tr', {}, h('td', { colspan: cols.length + 3 }, 'No records match.'))
        : conn.edges.map((e) => h('tr', {},
          h('th', { scope: 'row', class: 'code' }, e.node.core.id),
          cols.map((c) => h('td', {}, cell(c, e.node[c.name]))),
          h('td', { class: 'nowrap' }, e.node.core.created || '—'),
          h('td', { class: 'nowrap' }, e.node.core.updated || '—'),
          showTrashed ? h('td', { class: 'nowrap' }, e.node.core.trashed || '—') : null)))));
    paging();
  }

  function paging() {
    prev.disabled = stack.length === 0;
    next.disabled = !(info && info.hasNextPage);
    replace(pageLabel, `Page ${stack.length + 1}`);
  }

  function restart() { stack = []; after = null; fetchPage(); }
  prev.addEventListener('click', () => { after = stack.pop() ?? null; fetchPage(); });
  next.addEventListener('click', () => { if (!info) return; stack.push(after); after = info.endCursor; fetchPage(); });
  size.addEventListener('change', restart);

  const filterForm = h('form', { class: 'card', role: 'search', 'aria-label': `Filter ${type} records`, onsubmit: (ev) => { ev.preventDefault(); restart(); } },
    h('div', { class: 'row' },
      field('ArcQL filter', filter, "For example: price > 5 SORT price DESC, or * for every record."),
      field('Page size', size),
      h('div', { class: 'field check' }, h('label', {}, trashed, ' Include trashed'))),
    h('button', { type: 'submit' }, 'Apply filter'), err);

  replace(el, h('h2', {}, type), filterForm, table,
    h('div', { class: 'inline pager' }, prev, pageLabel, next),
    createForm(domain, token, s, type, restart));
  fetchPage();
}

// createForm builds inputs for the type's scalar input fields; empty ones
// are left out of the record.
function createForm(domain, token, s, type, onCreated) {
  const input = s.types.get(type + 'Input');
  const inputs = [];
  for (const f of (input && input.inputFields) || []) {
    if (f.name === 'core' || !NAME.test(f.name)) continue;
    const u = unwrap(f.type);
    if (u.list || (u.kind !== 'SCALAR' && u.kind !== 'ENUM') || u.name === 'Json') continue;
    let control;
    if (u.name === 'Boolean') control = h('select', {}, h('option', { value: '' }, '—'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
    else if (u.kind === 'ENUM') {
      const e = s.types.get(u.name);
      control = h('select', {}, h('option', { value: '' }, '—'), ((e && e.enumValues) || []).map((v) => h('option', { value: v.name }, v.name)));
    } else if (u.name === 'Int') control = h('input', { type: 'number', step: '1', inputmode: 'numeric' });
    else if (u.name === 'Float') control = h('input', { type: 'number', step: 'any', inputmode: 'decimal' });
    else control = h('input', { type: u.name === 'Email' ? 'email' : 'text', autocomplete: 'off' });
    control.name = f.name;
    inputs.push({ name: f.name, kind: u.name, control, el: field(`${f.name} (${u.name})`, control) });
  }
  const msg = status();
  const err = alert();
  const button = h('button', { type: 'submit' }, `Create ${type}`);
  return h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    const rec = {};
    for (const i of inputs) {
      const v = i.control.value;
      if (v === '') continue;
      if (i.kind === 'Int') rec[i.name] = parseInt(v, 10);
      else if (i.kind === 'Float') rec[i.name] = parseFloat(v);
      else if (i.kind === 'Boolean') rec[i.name] = v === 'true';
      else rec[i.name] = v;
    }
    button.disabled = true;
    const r = await graphql(domain, token, 'mutation CoreConsoleCreate($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }', { v: { [type]: [rec] } });
    button.disabled = false;
    if (!r.ok) { report(err, 'Not created: ' + describe(r), true); return; }
    const id = r.body.data.upsert[0] && r.body.data.upsert[0].id;
    for (const i of inputs) i.control.value = '';
    report(msg, `Created ${type} ${id}.`);
    onCreated();
  } }, h('h3', {}, `New ${type}`), inputs.length ? h('div', { class: 'grid' }, inputs.map((i) => i.el)) : h('p', {}, 'This type has no plain fields to fill in.'), button, msg, err);
}
