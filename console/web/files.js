// The files of an instance (#/files/{domain}): every File record, newest
// first, with its name, type, size, owner, a thumbnail of an image and a
// download link, a page at a time. It reads through the instance's own
// API with the instance's admin session (api.js instanceAuth), under the
// rules of every record.
import { describe, graphql, instanceAuth } from './api.js';
import { alert, h, replace, report, size } from './dom.js';
import { fileDownload, fileImage, isImage, recordHref } from './record.js';

// filesLink is the "Files" control of the views that show an instance.
export function filesLink(domain) {
  return h('a', { href: `#/files/${encodeURIComponent(domain)}`, 'aria-label': `Files of ${domain}` }, 'Files');
}

const PAGE = 25;

const FIND = `query CoreConsoleFiles($first: Int, $after: String) {
  find(type: File, arcql: "* SORT core.created DESC", first: $first, after: $after) {
    edges { node { ... on File { name type size url { path } core { id createdBy created } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export function filesView(main, domain, heading) {
  heading(`Files of ${domain}`);
  const body = h('div');
  main.append(h('p', {}, h('a', { href: `#/data/${encodeURIComponent(domain)}` }, `← Data of ${domain}`)),
    body);

  let stack = []; // the after cursors of the pages before this one
  let after = null;
  async function load() {
    const token = instanceAuth(domain);
    const err = alert();
    const table = h('div', { class: 'scroll', 'aria-busy': 'true' }, 'Loading…');
    const prev = h('button', { type: 'button', disabled: stack.length === 0, onclick: () => { after = stack.pop() ?? null; load(); } }, 'Previous page');
    const next = h('button', { type: 'button', disabled: true }, 'Next page');
    replace(body, err, table, h('div', { class: 'inline pager' }, prev, h('span', { class: 'page', 'aria-live': 'polite' }, `Page ${stack.length + 1}`), next));
    const r = await graphql(domain, token, FIND, { first: PAGE, after });
    table.removeAttribute('aria-busy');
    if (!r.ok) { replace(table); report(err, describe(r), true); return; }
    const conn = r.body.data.find;
    if (conn.pageInfo.hasNextPage) {
      next.disabled = false;
      next.addEventListener('click', () => { stack.push(after); after = conn.pageInfo.endCursor; load(); });
    }
    replace(table, h('table', { class: 'files' },
      h('caption', {}, `Files of ${domain}`),
      h('thead', {}, h('tr', {}, ['Preview', 'Name', 'Type', 'Size', 'Owner', 'Uploaded', 'Download'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, conn.edges.length === 0
        ? h('tr', {}, h('td', { colspan: 7 }, 'No files yet.'))
        : conn.edges.map(({ node }) => row(domain, token, node)))));
  }
  load();
}

function row(domain, token, node) {
  return h('tr', {},
    h('td', {}, isImage(node) ? fileImage(node, token, '100x100', { alt: `Thumbnail of ${node.name}`, width: 50, height: 50 }) : '—'),
    h('th', { scope: 'row' }, h('a', { href: recordHref(domain, 'File', node.core.id) }, node.name)),
    h('td', { class: 'code' }, node.type),
    h('td', { class: 'nowrap' }, size(node.size)),
    h('td', { class: 'code' }, node.core.createdBy || '—'),
    h('td', { class: 'nowrap' }, node.core.created || '—'),
    h('td', {}, fileDownload(node, token, 'Download', { 'aria-label': `Download ${node.name}` })));
}
