// The data browser: an instance's record types (from introspection through
// /graphql, with the instance's admin session, api.js instanceAuth), a page of records
// of one type with an ArcQL filter, sort by column and cursor paging, a
// form that creates a record, and one record (record.js) at
// #/data/{domain}/{type}/{id}. Everything goes through the instance's own
// API and rules.
import { admin, describe, graphql, instanceAuth } from './api.js';
import { alert, field, h, replace, report } from './dom.js';
import { BUILTIN, INTROSPECT, columns, labelField, model, sortClause, withSort } from './model.js';
import { ownerCell, recordForm, recordHref, recordView, refLabel, usernames } from './record.js';

// schemas caches an instance's introspection by domain.
const schemas = new Map();

// forgetSchema drops the cached schema of domain (its release changed).
export function forgetSchema(domain) { schemas.delete(domain); }

export async function dataView(main, domain, type, heading) {
  if (!domain) return chooseInstance(main, heading);
  heading(`Data of ${domain}`);
  const err = alert();
  const body = h('div');
  main.append(h('p', {}, h('a', { href: '#/instances' }, '← Instances')), err, body);

  async function load() {
    report(err, '');
    const token = instanceAuth(domain);
    replace(body, h('p', { 'aria-busy': 'true' }, 'Loading the schema…'));
    let s = schemas.get(domain);
    if (!s) {
      const r = await graphql(domain, token, INTROSPECT);
      if (!r.ok) { replace(body); report(err, describe(r), true); return; }
      s = model(r.body.data);
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
    // The record's id is the route's fourth part; app.js's router hands
    // the data view only the first three.
    const id = decodeURIComponent(location.hash.split('/')[4] || '');
    if (current && id) recordView(records, domain, token, s, current, id);
    else if (current) recordsView(records, domain, token, s, current);
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

function cell(domain, col, v) {
  if (v === null || v === undefined) return '—';
  if (col.ref && col.list) {
    if (v.length === 0) return '—';
    const shown = v.slice(0, 3).map((x) => refLabel(domain, col, x));
    return h('span', {}, shown.flatMap((a, i) => (i ? [', ', a] : [a])), v.length > 3 ? ` and ${v.length - 3} more` : '');
  }
  if (col.ref) return refLabel(domain, col, v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function recordsView(el, domain, token, s, type) {
  // The field that names a record (labelField) leads, then the others.
  const label = labelField(s, type);
  const cols = columns(s, type).sort((a, b) => (b.name === label) - (a.name === label));
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
  let arcql = filter.value; // the filter applied: paging keeps it while the box is edited
  let sortFocus = null; // the path of the sort button pressed, focused again in the new table

  const doc = `query CoreConsoleFind($arcql: String!, $first: Int, $after: String, $trashed: Boolean) {
  find(type: ${type}, arcql: $arcql, first: $first, after: $after, includeTrashed: $trashed) {
    edges { cursor node { ... on ${type} { ${cols.map((c) => c.sel).join(' ')} core { id createdBy created updated trashed } } } }
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
    const r = await graphql(domain, token, doc, { arcql, first: Number(size.value), after, trashed: trashed.checked });
    if (mine !== latest) return;
    table.removeAttribute('aria-busy');
    if (!r.ok) { report(err, describe(r), true); replace(table); info = null; paging(); return; }
    const conn = r.body.data.find;
    const names = await usernames(domain, token, conn.edges.map((e) => e.node.core.createdBy));
    if (mine !== latest) return;
    info = conn.pageInfo;
    const showTrashed = trashed.checked;
    // The schema's fields first, then the owner, the times and the id.
    const heads = [...cols.map((c) => ({ name: c.name, path: !c.ref && !c.list ? c.name : null })),
      { name: 'owner', path: 'core.createdBy' },
      { name: 'created', path: 'core.created' }, { name: 'updated', path: 'core.updated' },
      showTrashed ? { name: 'trashed', path: 'core.trashed' } : null,
      { name: 'core.id', path: 'core.id' }].filter(Boolean);
    const key = sortClause(arcql).key;
    replace(table, h('table', {},
      h('caption', {}, `${type} records`),
      h('thead', {}, h('tr', {}, heads.map((c) => header(c, key)))),
      h('tbody', {}, conn.edges.length === 0
        ? h('tr', {}, h('td', { colspan: heads.length }, 'No records match.'))
        : conn.edges.map((e) => h('tr', {},
          cols.map((c) => h('td', { class: c.name === label ? 'label' : undefined }, cell(domain, c, e.node[c.name]))),
          h('td', {}, ownerCell(domain, e.node.core.createdBy, names)),
          h('td', { class: 'nowrap' }, e.node.core.created || '—'),
          h('td', { class: 'nowrap' }, e.node.core.updated || '—'),
          showTrashed ? h('td', { class: 'nowrap' }, e.node.core.trashed || '—') : null,
          h('th', { scope: 'row', class: 'code' }, h('a', { href: recordHref(domain, type, e.node.core.id) }, e.node.core.id)))))));
    if (sortFocus) {
      const b = [...table.querySelectorAll('button.sort')].find((x) => x.dataset.path === sortFocus);
      if (b) b.focus();
      sortFocus = null;
    }
    paging();
  }

  function paging() {
    prev.disabled = stack.length === 0;
    next.disabled = !(info && info.hasNextPage);
    replace(pageLabel, `Page ${stack.length + 1}`);
  }

  // header is a column's heading: a button that sorts by it, ascending
  // first, then descending, through the filter's SORT clause (find has no
  // sort argument), shown in the filter box.
  function header(c, key) {
    if (!c.path) return h('th', { scope: 'col' }, c.name);
    const sorted = key && key.path === c.path;
    const desc = sorted && key.desc;
    return h('th', { scope: 'col', 'aria-sort': sorted ? (desc ? 'descending' : 'ascending') : undefined },
      h('button', { type: 'button', class: 'sort', 'data-path': c.path, 'aria-label': `Sort by ${c.name}`, onclick: () => {
        filter.value = withSort(arcql, c.path, sorted && !desc);
        sortFocus = c.path;
        restart();
      } }, c.name, sorted ? h('span', { 'aria-hidden': 'true' }, desc ? ' ▼' : ' ▲') : null));
  }

  function restart() { stack = []; after = null; arcql = filter.value; fetchPage(); }
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
    recordForm(domain, token, s, type, null, restart));
  fetchPage();
}
