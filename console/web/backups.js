// Backups and moving instances (#/backups): take a backup of the whole
// service now, the list of kept backups (name, size, time) with a
// download of each; an instance's export (download, also in its Manage
// panel) and an import of an export into a new instance. Everything goes
// through the admin API (/admin/v1/backups…, /admin/v1/instances/{domain}/
// export and /import) with the admin token, in a header: a download is
// fetched and handed to the browser as a blob, never a URL with the token.
import { admin, describe, session } from './api.js';
import { alert, field, h, replace, report, saveBlob, size, status } from './dom.js';

export async function backupsView(main, heading) {
  heading('Backups');
  const err = alert();
  const msg = status();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  const take = h('button', { type: 'button', onclick: async () => {
    report(err, ''); report(msg, '');
    take.disabled = true;
    take.setAttribute('aria-busy', 'true');
    const r = await admin('POST', '/backups');
    take.disabled = false;
    take.removeAttribute('aria-busy');
    if (!r.ok) { report(err, 'No backup taken: ' + describe(r), true); return; }
    report(msg, `Took ${r.body.name} (${size(r.body.size)}).`);
    load();
  } }, 'Take a backup now');
  const moves = h('div');
  main.append(
    h('section', { class: 'card', 'aria-labelledby': 'backups-title' },
      h('h2', { id: 'backups-title' }, 'Backups of the service'),
      h('p', {}, 'A backup is a consistent copy of every instance, release, account, grant, function and file, taken while the service runs. The server keeps the newest in its backup folder.'),
      h('div', { class: 'inline' }, take), msg, err, list),
    moves);

  async function load() {
    const r = await admin('GET', '/backups');
    list.removeAttribute('aria-busy');
    if (!r.ok) {
      replace(list, h('p', {}, r.status === 404 || r.status === 405
        ? 'This server keeps no backups: start it with --backup-dir (CORE_BACKUP_DIR).'
        : 'Backups not read: ' + describe(r)));
      take.disabled = r.status === 404 || r.status === 405;
      return;
    }
    const rows = r.body.backups || [];
    if (rows.length === 0) { replace(list, h('p', {}, 'No backups yet.')); return; }
    const dlErr = alert();
    replace(list, h('div', { class: 'scroll' }, h('table', {},
      h('caption', {}, 'Kept backups, newest first'),
      h('thead', {}, h('tr', {}, ['Name', 'Size', 'Taken', 'Download'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows.map((b) => h('tr', {},
        h('th', { scope: 'row', class: 'code' }, b.name),
        h('td', { class: 'nowrap' }, size(b.size)),
        h('td', { class: 'nowrap' }, b.created || '—'),
        h('td', {}, downloadButton(`/backups/${encodeURIComponent(b.name)}`, b.name, `Download ${b.name}`, dlErr))))))), dlErr);
  }
  load();
  movesSection(moves);
}

// movesSection is the instances' export and the import into a new one.
async function movesSection(el) {
  const r = await admin('GET', '/instances');
  if (!r.ok) { replace(el, h('p', { class: 'alert error', role: 'alert' }, describe(r))); return; }
  const instances = r.body.instances;
  const exErr = alert();
  replace(el, h('section', { class: 'card', 'aria-labelledby': 'export-title' },
    h('h2', { id: 'export-title' }, 'Export an instance'),
    h('p', {}, "An export holds one instance's records (trashed ones too), accounts with their password hashes, grants, webhooks, hooks, schedules, files and settings; an import makes a new instance of it, ids kept."),
    instances.length === 0 ? h('p', {}, 'No instances yet.')
      : h('ul', {}, instances.map((i) => h('li', { class: 'inline' }, h('span', { class: 'code' }, i.domain), ` (${i.app}/${i.release})`,
        exportButton(i.domain, exErr)))),
    exErr),
  importForm());
}

// exportButton downloads the export of domain.
export function exportButton(domain, err) {
  return downloadButton(`/instances/${encodeURIComponent(domain)}/export`, `${domain}.tar.gz`, `Export ${domain}`, err);
}

// importForm uploads an export into a new instance: its domain, and the
// app and release it runs (the exported instance's when left empty).
function importForm() {
  const file = h('input', { type: 'file', accept: '.tar.gz,.tgz,application/gzip' });
  const domain = h('input', { autocomplete: 'off', spellcheck: 'false' });
  const app = h('input', { autocomplete: 'off', spellcheck: 'false' });
  const release = h('input', { autocomplete: 'off', spellcheck: 'false' });
  const msg = status();
  const err = alert();
  const done = h('div');
  const button = h('button', { type: 'submit' }, 'Import');
  return h('form', { class: 'card', 'aria-labelledby': 'import-title', onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, ''); replace(done);
    const f = file.files[0];
    const d = domain.value.trim();
    if (!f || !d) { report(err, 'Choose an export file and give the new instance a domain.', true); return; }
    const q = new URLSearchParams();
    if (app.value.trim()) q.set('app', app.value.trim());
    if (release.value.trim()) q.set('release', release.value.trim());
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    const r = await raw('POST', `/instances/${encodeURIComponent(d)}/import${q.size ? '?' + q : ''}`, f);
    button.disabled = false;
    button.removeAttribute('aria-busy');
    if (!r.ok) { report(err, 'Not imported: ' + r.message, true); return; }
    report(msg, `Imported ${r.body.records} records into ${r.body.domain}.`);
    const token = h('input', { readonly: true, class: 'code', value: r.body.token, spellcheck: 'false' });
    replace(done, h('section', { class: 'notice', 'aria-label': `Token of ${r.body.domain}` },
      h('p', {}, "The new instance's token is shown this once, for your app; the console does not keep it."),
      field(`Instance token of ${r.body.domain}`, token),
      h('a', { href: `#/data/${encodeURIComponent(r.body.domain)}` }, `Browse data of ${r.body.domain}`)));
    file.value = '';
  } },
  h('h2', { id: 'import-title' }, 'Import into a new instance'),
  field('Export file', file),
  h('div', { class: 'row' }, field('New domain', domain), field('App (optional)', app, "The export's when empty."),
    field('Release (optional)', release, "The export's when empty.")),
  button, msg, err, done);
}

// downloadButton fetches an admin path with the admin token in a header
// and saves the answer under name.
function downloadButton(path, name, label, err) {
  const b = h('button', { type: 'button', 'aria-label': label, onclick: async () => {
    report(err, '');
    b.disabled = true;
    b.setAttribute('aria-busy', 'true');
    const r = await raw('GET', path);
    b.disabled = false;
    b.removeAttribute('aria-busy');
    if (!r.ok) { report(err, `${label}: ${r.message}`, true); return; }
    saveBlob(r.blob, name);
  } }, label.split(' ')[0]);
  return b;
}

// raw calls an admin path whose body or answer is not JSON: {ok, status,
// body (parsed JSON, when it is), blob, message}.
async function raw(method, path, body) {
  let res;
  try {
    res = await fetch(new URL('../admin/v1' + path, location.href), {
      method, body, headers: { authorization: session.token() || '' },
      cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer',
    });
  } catch (e) {
    return { ok: false, status: 0, message: 'the server cannot be reached (' + e.message + ')' };
  }
  const type = res.headers.get('content-type') || '';
  if (type.startsWith('application/json')) {
    const j = await res.json().catch(() => null);
    const e = j && Array.isArray(j.errors) && j.errors[0];
    const message = e ? (e.extensions && e.extensions.code ? `${e.message} (${e.extensions.code})` : e.message) : `${res.status} ${res.statusText}`;
    return { ok: res.ok && !e, status: res.status, body: j, message };
  }
  if (!res.ok) return { ok: false, status: res.status, message: `${res.status} ${res.statusText}` };
  return { ok: true, status: res.status, blob: await res.blob() };
}
