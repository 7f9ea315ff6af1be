// Functions and webhooks: an app's function versions (#/functions/{app}:
// list, upload a .js or a .zip/.tar.gz package, delete) through the admin
// API; an instance's function log, newest first and refreshed while the
// view is open, and its Webhook records (#/hooks/{domain}), read through
// /graphql with the instance's admin session, each with its URL and a "send test"
// that posts to it and shows what came back.
import { admin, describe, graphql, instanceAuth } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';
import { pretty, send, upload } from './raw.js';

// REFRESH is how often the function log is read again while shown.
const REFRESH = 3000;

const enc = encodeURIComponent;

// hooksLink is the control of the views that show an instance.
export function hooksLink(domain) {
  return h('a', { href: `#/hooks/${enc(domain)}`, 'aria-label': `Functions and webhooks of ${domain}` }, 'Functions');
}

function failure(r) { return h('p', { class: 'alert error', role: 'alert' }, describe(r)); }

function loading() { return h('div', { 'aria-busy': 'true' }, 'Loading…'); }

export async function functionsView(main, app, heading) {
  if (!app) return chooseApp(main, heading);
  heading(`Functions of ${app}`);
  const versions = loading();
  const instances = h('div');
  main.append(h('p', {}, h('a', { href: '#/functions' }, '← Functions')),
    h('section', { class: 'card', 'aria-labelledby': 'versions-title' }, h('h2', { id: 'versions-title' }, 'Function versions'), versions),
    uploadForm(app, () => loadVersions(versions, app)), instances);
  loadVersions(versions, app);
  const r = await admin('GET', '/instances');
  if (!r.ok) { replace(instances, failure(r)); return; }
  const mine = r.body.instances.filter((i) => i.app === app);
  replace(instances, h('section', { class: 'card' }, h('h2', {}, `Instances of ${app}`),
    mine.length === 0 ? h('p', {}, 'None yet.') : h('ul', {}, mine.map((i) => h('li', {},
      h('a', { href: `#/hooks/${enc(i.domain)}` }, `Function log and webhooks of ${i.domain}`), ` (release ${i.release})`)))));
}

async function chooseApp(main, heading) {
  heading('Functions');
  const list = loading();
  main.append(list);
  const r = await admin('GET', '/apps');
  list.removeAttribute('aria-busy');
  if (!r.ok) { replace(list, failure(r)); return; }
  if (r.body.apps.length === 0) { replace(list, h('p', {}, 'No apps yet.')); return; }
  replace(list, h('p', {}, 'Choose an app:'), h('ul', {}, r.body.apps.map((a) => h('li', {},
    h('a', { href: `#/functions/${enc(a.app)}` }, `Functions of ${a.app}`)))));
}

async function loadVersions(el, app) {
  const r = await admin('GET', `/apps/${enc(app)}/functions`);
  el.removeAttribute('aria-busy');
  if (!r.ok) { replace(el, failure(r)); return; }
  const rows = r.body.functions.flatMap((f) => f.versions);
  if (rows.length === 0) { replace(el, h('p', {}, 'No function versions yet: upload one below.')); return; }
  const err = alert();
  replace(el, h('div', { class: 'scroll' }, h('table', {},
    h('caption', { class: 'sr-only' }, `Function versions of ${app}`),
    h('thead', {}, h('tr', {}, ['Function', 'Version', 'Format', 'Main', 'Size', 'Published', 'SHA-256', 'Delete'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, rows.map((v) => h('tr', {},
      h('th', { scope: 'row' }, v.name),
      h('td', {}, v.version),
      h('td', {}, v.format),
      h('td', { class: 'code' }, v.main),
      h('td', { class: 'nowrap' }, `${v.size.toLocaleString()} B`),
      h('td', { class: 'nowrap' }, new Date(v.published).toLocaleString()),
      h('td', { class: 'code', title: v.sha256 }, v.sha256.slice(0, 12)),
      h('td', {}, h('button', { type: 'button', 'aria-label': `Delete ${v.name} ${v.version}`, onclick: async () => {
        // Bindings to a deleted version answer "not published" until it is
        // uploaded again: worth a question.
        if (!window.confirm(`Delete version ${v.version} of ${v.name}? Calls bound to it will fail until it is published again.`)) return;
        const d = await admin('DELETE', `/apps/${enc(app)}/functions/${enc(v.name)}/${enc(v.version)}`);
        if (!d.ok) { report(err, 'Not deleted: ' + describe(d), true); return; }
        loadVersions(el, app);
      } }, 'Delete')))))), err));
}

function uploadForm(app, onUploaded) {
  const name = h('input', { name: 'function', required: true, autocomplete: 'off', spellcheck: 'false' });
  const version = h('input', { name: 'version', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'v1' });
  const file = h('input', { type: 'file', name: 'file', required: true, accept: '.js,.mjs,.cjs,.zip,.tar.gz,.tgz' });
  file.addEventListener('change', () => {
    const f = file.files[0];
    if (f && !name.value) name.value = f.name.replace(/\.(js|mjs|cjs|zip|tgz|tar\.gz)$/, '');
  });
  const button = h('button', { type: 'submit' }, 'Upload version');
  const msg = status();
  const err = alert();
  return h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    button.disabled = true;
    const r = await upload(`/apps/${enc(app)}/functions/${enc(name.value.trim())}/${enc(version.value.trim())}`, file.files[0]);
    button.disabled = false;
    if (!r.ok) { report(err, 'Not uploaded: ' + describe(r), true); return; }
    report(msg, `Published ${r.body.name} ${r.body.version}: ${r.body.status}.`);
    file.value = '';
    onUploaded();
  } },
  h('h2', {}, 'Upload a version'),
  h('p', {}, 'A single .js source, or a .zip or .tar.gz package (its package.json names main, by default index.js). The same name and version replaces it.'),
  h('div', { class: 'row' }, field('Function', name), field('Version', version), field('File', file)),
  button, msg, err);
}

// ---- one instance: function log and webhooks ----

export async function hooksView(main, domain, heading) {
  heading(`Functions and webhooks of ${domain}`);
  const back = h('p', { class: 'inline' }, h('a', { href: '#/instances' }, '← Instances'));
  const log = h('section', { class: 'card', 'aria-labelledby': 'log-title' });
  const hooks = h('section', { class: 'card', 'aria-labelledby': 'hooks-title' });
  main.append(back, hooks, log);
  functionLog(log, domain);
  webhooks(hooks, domain);
  const r = await admin('GET', `/instances/${enc(domain)}`);
  if (r.ok) back.append(h('a', { href: `#/functions/${enc(r.body.app)}` }, `Function versions of ${r.body.app}`));
}

// functionLog reads the log every REFRESH ms while el is in the page and
// not paused: leaving the view (any other route) ends it.
function functionLog(el, domain) {
  const pause = h('button', { type: 'button', 'aria-pressed': 'false' }, 'Pause auto-refresh');
  const updated = h('span', { class: 'muted' });
  const err = alert();
  const table = h('div', { class: 'scroll' }, h('p', { 'aria-busy': 'true' }, 'Loading…'));
  replace(el, h('h2', { id: 'log-title' }, 'Function log'),
    h('p', {}, 'Console output of the instance\'s functions and the runtime\'s notes, newest first.'),
    h('div', { class: 'inline' }, pause, updated), err, table);
  let timer = 0;
  let last = '';
  const stop = () => { clearTimeout(timer); timer = 0; };
  window.addEventListener('hashchange', stop, { once: true });
  pause.addEventListener('click', () => {
    const paused = pause.getAttribute('aria-pressed') !== 'true';
    pause.setAttribute('aria-pressed', String(paused));
    if (paused) stop(); else tick();
  });

  async function tick() {
    stop();
    const r = await admin('GET', `/instances/${enc(domain)}/logs?limit=100`);
    if (!el.isConnected || pause.getAttribute('aria-pressed') === 'true') return;
    timer = setTimeout(tick, REFRESH);
    replace(updated, `Updated ${new Date().toLocaleTimeString()}; refreshed every ${REFRESH / 1000} s.`);
    if (!r.ok) { report(err, describe(r), true); return; }
    report(err, '');
    const entries = [...r.body.entries].reverse();
    const key = JSON.stringify(entries[0] || null) + entries.length;
    if (key === last) return; // unchanged: leave the table (and a reader's place) alone
    last = key;
    if (entries.length === 0) { replace(table, h('p', {}, 'Nothing logged yet.')); return; }
    replace(table, h('table', { class: 'log' },
      h('caption', { class: 'sr-only' }, `Function log of ${domain}, newest first`),
      h('thead', {}, h('tr', {}, ['Time', 'Level', 'Function', 'Message'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, entries.map((e) => h('tr', { class: `level-${e.level}` },
        h('td', { class: 'nowrap', title: e.time }, new Date(e.time).toLocaleString()),
        h('td', {}, e.level),
        h('td', { class: 'nowrap', title: `call ${e.call}` }, e.function),
        h('td', {}, h('pre', { class: 'message' }, e.message)))))));
  }
  tick();
}

const WEBHOOKS = `query CoreConsoleWebhooks {
  find(type: Webhook, arcql: "*", first: 100) {
    edges { node { ... on Webhook { name query { type field selection } core { id } } } }
  }
}`;

// webhooks lists the instance's Webhook records (its admin session) and
// sends a test request to one.
function webhooks(el, domain) {
  const err = alert();
  const list = h('div');
  const tester = sendTest(domain);
  replace(el, h('h2', { id: 'hooks-title' }, 'Webhooks'), err, list, tester.el);

  async function load() {
    report(err, '');
    replace(list, loading());
    const r = await graphql(domain, instanceAuth(domain), WEBHOOKS);
    if (!r.ok) { replace(list); report(err, describe(r), true); return; }
    const rows = r.body.data.find.edges.map((e) => e.node);
    if (rows.length === 0) { replace(list, h('p', {}, 'No Webhook records: create one (name, query { type field }) in the data browser or through /graphql.')); return; }
    replace(list, h('div', { class: 'scroll' }, h('table', {},
      h('caption', { class: 'sr-only' }, `Webhooks of ${domain}`),
      h('thead', {}, h('tr', {}, ['Name', 'URL', 'Runs', 'Test'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows.map((w) => {
        const label = w.name || w.core.id;
        const url = new URL(`../webhook/${enc(domain)}/${enc(label)}`, location.href).href;
        return h('tr', {},
          h('th', { scope: 'row' }, label),
          h('td', { class: 'code break' }, url),
          h('td', { class: 'code' }, w.query ? `${w.query.type}.${w.query.field}` : '—'),
          h('td', {}, h('button', { type: 'button', 'aria-label': `Send test to ${label}`, onclick: () => tester.use(url) }, 'Send test')));
      })))));
  }
  load();
}

// sendTest is the "send test" form: a request to a webhook URL (same
// origin) and its answer: status, headers and body.
function sendTest(domain) {
  const url = h('input', { type: 'url', required: true, class: 'code', autocomplete: 'off', spellcheck: 'false',
    value: new URL(`../webhook/${enc(domain)}/`, location.href).href });
  const method = h('select', {}, ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'].map((m) => h('option', { value: m }, m)));
  const type = h('input', { autocomplete: 'off', spellcheck: 'false', value: 'application/json' });
  const body = h('textarea', { class: 'code box', rows: 5, spellcheck: 'false' });
  body.value = '{"event": "test"}';
  const button = h('button', { type: 'submit' }, 'Send');
  const err = alert();
  const result = h('div', { class: 'sent', 'aria-live': 'polite' });
  const form = h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    report(err, '');
    const target = new URL(url.value, location.href);
    if (target.origin !== location.origin || !target.pathname.includes(`/webhook/${enc(domain)}/`)) {
      report(err, `Only this server's webhooks of ${domain} can be sent to from here.`, true);
      return;
    }
    button.disabled = true;
    const hasBody = method.value !== 'GET';
    const r = await send(target, { method: method.value, headers: hasBody ? { 'content-type': type.value } : {}, body: hasBody ? body.value : undefined });
    button.disabled = false;
    if (r.error) { report(err, r.error, true); replace(result); return; }
    replace(result, h('h3', {}, 'Response'),
      h('p', { class: 'code' }, `Status ${r.status} ${r.statusText}`),
      h('table', { class: 'headers' }, h('caption', {}, 'Headers'),
        h('tbody', {}, r.headers.map(([k, v]) => h('tr', {}, h('th', { scope: 'row', class: 'code' }, k), h('td', { class: 'code break' }, v))))),
      h('pre', { class: 'response code', tabindex: '0', role: 'region', 'aria-label': 'Response body' }, pretty(r.text) || '(empty)'));
  } },
  h('h3', {}, 'Send test'),
  field('Webhook URL', url),
  h('div', { class: 'row' }, field('Method', method), field('Content type', type)),
  field('Body', body), button, err, result);
  return {
    el: form,
    use(u) { url.value = u; body.focus(); },
  };
}
