// The instances view (#/instances): the list, creating one (its token
// shown once), changing its release (with the forced change the admin API
// offers when the server refuses a breaking one), and one instance's
// settings, token rotation and deletion behind a typed confirmation.
import { admin, describe, session } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';
import { forgetSchema } from './data.js';
import { playgroundLink } from './playground.js';
import { hooksLink } from './functions.js';
import { mailLink } from './mail.js';
import { exportButton } from './backups.js';
import { reactionsLink } from './reactions.js';

export async function instancesView(main, heading) {
  heading('Instances');
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  const panel = h('div');
  const createForm = h('div');
  main.append(list, panel, createForm);
  const [ri, ra] = await Promise.all([admin('GET', '/instances'), admin('GET', '/apps')]);
  list.removeAttribute('aria-busy');
  if (!ri.ok || !ra.ok) { replace(list, h('p', { class: 'alert error', role: 'alert' }, describe(ri.ok ? ra : ri))); return; }
  const apps = ra.body.apps;
  const refresh = async () => {
    const again = await admin('GET', '/instances');
    if (again.ok) renderInstances(list, panel, again.body.instances, apps, refresh);
  };
  renderInstances(list, panel, ri.body.instances, apps, refresh);
  replace(createForm, createInstanceForm(apps, async (inst) => {
    replace(panel, tokenPanel(inst, `Created ${inst.domain}`));
    refresh();
  }));
}

function releasesOf(apps, app) {
  const a = apps.find((x) => x.app === app);
  return a ? a.releases.map((r) => r.release) : [];
}

function renderInstances(list, panel, instances, apps, refresh) {
  if (instances.length === 0) { replace(list, h('p', {}, 'No instances yet: create one below.')); return; }
  const msg = status();
  const err = alert();
  replace(list, h('div', { class: 'scroll' }, h('table', {},
    h('caption', { class: 'sr-only' }, 'Instances'),
    h('thead', {}, h('tr', {}, ['Domain', 'App', 'Release', 'Created', 'Change release', 'Open', 'Manage'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, instances.map((inst) => {
      const select = h('select', { 'aria-label': `Release of ${inst.domain}` },
        releasesOf(apps, inst.app).map((r) => h('option', { value: r, selected: r === inst.release }, r)));
      const releaseCell = h('td', {}, inst.release);
      const change = async (force) => {
        button.disabled = true;
        report(msg, ''); report(err, '');
        const body = { release: select.value };
        if (force) body.force = true;
        const r = await admin('PATCH', `/instances/${encodeURIComponent(inst.domain)}`, body);
        button.disabled = false;
        if (!r.ok) {
          const first = r.errors[0] || {};
          const changes = (first.extensions && first.extensions.changes) || [];
          report(err, `${inst.domain} keeps ${inst.release}: ${describe(r)}`, true);
          if (changes.length) err.append(h('ul', {}, changes.map((c) => h('li', {}, changeText(c)))));
          if (!force && first.extensions && first.extensions.code === 'BREAKING_CHANGE') {
            err.append(h('p', {}, 'Changing anyway keeps the records as stored: fields listed above may read differently or fail to read.'),
              h('button', { type: 'button', class: 'danger', onclick: () => change(true) }, `Change ${inst.domain} to ${select.value} anyway`));
          }
          return;
        }
        inst.release = r.body.release;
        forgetSchema(inst.domain);
        replace(releaseCell, r.body.release);
        report(msg, `${inst.domain} now runs ${r.body.app}/${r.body.release}.`);
      };
      const button = h('button', { type: 'button', 'aria-label': `Change release of ${inst.domain}`, onclick: () => change(false) }, 'Change');
      return h('tr', {},
        h('th', { scope: 'row' }, inst.domain),
        h('td', {}, inst.app),
        releaseCell,
        h('td', {}, new Date(inst.created).toLocaleString()),
        h('td', { class: 'inline' }, select, button),
        h('td', { class: 'inline' }, h('a', { href: `#/data/${encodeURIComponent(inst.domain)}`, 'aria-label': `Browse data of ${inst.domain}` }, 'Browse'),
          playgroundLink(inst.domain), hooksLink(inst.domain), mailLink(inst.domain), reactionsLink(inst.domain)),
        h('td', {}, h('button', { type: 'button', 'aria-label': `Manage ${inst.domain}`, onclick: () => {
          replace(panel, managePanel(inst, refresh, panel));
          panel.querySelector('h2').focus();
        } }, 'Manage')));
    })))), msg, err);
}

// changeText words one item of a BREAKING_CHANGE's extensions.changes.
function changeText(c) {
  if (typeof c === 'string') return c;
  if (c && c.type && c.field && c.change) return `${c.type}.${c.field}: ${c.change}${c.records ? ` (${c.records})` : ''}`;
  return JSON.stringify(c);
}

// managePanel holds one instance's settings, token rotation and deletion.
function managePanel(inst, refresh, panel) {
  const d = inst.domain;
  const path = `/instances/${encodeURIComponent(d)}`;
  const tokenSlot = h('div');
  const rotateErr = alert();
  const rotate = h('button', { type: 'button', onclick: async () => {
    report(rotateErr, '');
    rotate.disabled = true;
    const r = await admin('POST', path + '/token');
    rotate.disabled = false;
    if (!r.ok) { report(rotateErr, 'Not rotated: ' + describe(r), true); return; }
    forgetSchema(d);
    replace(tokenSlot, tokenPanel(r.body, `New token of ${d}`));
  } }, `Rotate token of ${d}`);

  const exportErr = alert();
  const confirm = h('input', { autocomplete: 'off', spellcheck: 'false' });
  const del = h('button', { type: 'submit', class: 'danger', disabled: true }, `Delete ${d}`);
  confirm.addEventListener('input', () => { del.disabled = confirm.value !== d; });
  const delErr = alert();
  const deleteForm = h('form', { onsubmit: async (ev) => {
    ev.preventDefault();
    if (confirm.value !== d) return;
    report(delErr, '');
    del.disabled = true;
    const r = await admin('DELETE', path);
    if (!r.ok) { del.disabled = false; report(delErr, 'Not deleted: ' + describe(r), true); return; }
    session.forget(d);
    const done = status();
    replace(panel, h('section', { class: 'card' }, done));
    report(done, `Deleted ${d}.`);
    refresh();
  } },
  h('h3', {}, 'Delete'),
  h('p', {}, `Deleting ${d} removes the instance and every record it holds. It cannot be undone.`),
  field(`Type ${d} to confirm`, confirm), del, delErr);

  return h('section', { class: 'card notice', 'aria-labelledby': 'manage-title' },
    h('h2', { id: 'manage-title', tabindex: '-1' }, `Manage ${d}`),
    settingsForm(inst),
    h('h3', {}, 'Token'),
    h('p', {}, 'A new token replaces the current one at once: clients using the old one are refused.'),
    rotate, rotateErr, tokenSlot,
    h('h3', {}, 'Export'),
    h('p', {}, h('span', {}, 'Everything the instance holds, as a file an import reads back (see '), h('a', { href: '#/backups' }, 'Backups'), h('span', {}, ').')),
    exportButton(d, exportErr), exportErr,
    deleteForm);
}

// settingsForm edits the settings the console shows: anonymous requests
// and registration, the Account fields every account reads, CORS
// origins, and env (names only: values are never
// shown; a new value is typed in a password field).
function settingsForm(inst) {
  const d = inst.domain;
  const anonReq = h('input', { type: 'checkbox', checked: !!inst.anonymousRequests });
  const anonReg = h('input', { type: 'checkbox', checked: !!inst.anonymousRegistration });
  // The Account fields every account of the instance may read
  // (accountFields: the server accepts only these three).
  const shared = new Set(inst.accountFields || []);
  const accountFields = ['username', 'enabled', 'verified'].map((f) => [f, h('input', { type: 'checkbox', checked: shared.has(f) })]);
  const origins = h('textarea', { rows: 3, spellcheck: 'false', class: 'code' });
  origins.value = ((inst.cors && inst.cors.allowedOrigins) || []).join('\n');
  const env = { ...(inst.env || {}) };
  const envList = h('ul', { class: 'refs' });
  const showEnv = () => {
    const names = Object.keys(env).sort();
    replace(envList, names.length === 0 ? h('li', {}, 'None.') : names.map((n) => h('li', { class: 'inline' },
      h('code', {}, n), h('span', { class: 'muted' }, '(value hidden)'),
      h('button', { type: 'button', 'aria-label': `Remove env ${n}`, onclick: () => { delete env[n]; showEnv(); } }, 'Remove'))));
  };
  showEnv();
  const envName = h('input', { autocomplete: 'off', spellcheck: 'false', class: 'code' });
  const envValue = h('input', { type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  const envErr = alert();
  const addEnv = () => {
    report(envErr, '');
    const n = envName.value.trim();
    if (!n) { report(envErr, 'Give the variable a name.', true); return; }
    env[n] = envValue.value;
    envName.value = ''; envValue.value = '';
    showEnv();
    envName.focus();
  };
  const msg = status();
  const err = alert();
  const save = h('button', { type: 'submit' }, 'Save settings');
  return h('form', { 'aria-label': `Settings of ${d}`, onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    save.disabled = true;
    const r = await admin('PATCH', `/instances/${encodeURIComponent(d)}`, {
      anonymousRequests: anonReq.checked,
      anonymousRegistration: anonReg.checked,
      cors: { allowedOrigins: origins.value.split(/\s+/).filter(Boolean) },
      accountFields: accountFields.filter(([, box]) => box.checked).map(([f]) => f),
      env,
    });
    save.disabled = false;
    if (!r.ok) { report(err, 'Not saved: ' + describe(r), true); return; }
    Object.assign(inst, r.body);
    report(msg, `Saved the settings of ${d}.`);
  } },
  h('h3', {}, 'Settings'),
  h('div', { class: 'field check' }, h('label', {}, anonReq, ' Anonymous requests'),
    h('small', {}, 'Calls without a token reach what access rights grant to anonymous (webhooks need it).')),
  h('div', { class: 'field check' }, h('label', {}, anonReg, ' Anonymous registration'),
    h('small', {}, 'Anonymous callers may create accounts.')),
  h('fieldset', {}, h('legend', {}, 'Account fields every account reads'),
    accountFields.map(([f, box]) => h('label', { class: 'inline' }, box, ' ' + f)),
    h('small', {}, 'Readable by every account of the instance without a grant (e.g. a task\'s assignee { username }).')),
  field('CORS origins', origins, 'One a line, each as a browser sends it (scheme, host and port, no path), or * for every origin.'),
  h('fieldset', { class: 'reflist' }, h('legend', {}, 'Env (names; values hidden)'), envList,
    h('div', { class: 'inline' }, field('Env name', envName), field('Env value', envValue),
      h('button', { type: 'button', onclick: addEnv }, 'Add env')), envErr),
  save, msg, err);
}

function createInstanceForm(apps, onCreated) {
  const domain = h('input', { name: 'domain', required: true, autocomplete: 'off', placeholder: 'books.local' });
  const app = h('select', { name: 'app', required: true }, apps.map((a) => h('option', { value: a.app }, a.app)));
  const release = h('select', { name: 'release', required: true });
  const fill = () => {
    const rs = releasesOf(apps, app.value);
    replace(release, rs.map((r, i) => h('option', { value: r, selected: i === rs.length - 1 }, r)));
  };
  app.addEventListener('change', fill);
  fill();
  const button = h('button', { type: 'submit', disabled: apps.length === 0 }, 'Create instance');
  const err = alert();
  return h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    report(err, '');
    const r = await admin('POST', '/instances', { domain: domain.value.trim(), app: app.value, release: release.value });
    button.disabled = false;
    if (!r.ok) { report(err, 'Not created: ' + describe(r), true); return; }
    domain.value = '';
    onCreated(r.body);
  } },
  h('h2', {}, 'Create an instance'),
  apps.length === 0 ? h('p', {}, 'Publish a release first.') : null,
  h('div', { class: 'row' }, field('Domain', domain), field('App', app), field('Release', release)),
  button, err);
}

// tokenPanel shows an instance's new token (created or rotated), once.
function tokenPanel(inst, title) {
  const input = h('input', { readonly: true, class: 'code', value: inst.token, spellcheck: 'false' });
  const copied = status();
  return h('section', { class: 'card notice', 'aria-label': title },
    h('h2', {}, title),
    h('p', {}, 'The token is shown this once: copy it now, for your app. The console does not keep it: it browses data with the admin token alone.'),
    field(`Instance token of ${inst.domain}`, input),
    h('div', { class: 'inline' },
      h('button', { type: 'button', onclick: () => copy(input, copied) }, 'Copy token'),
      h('a', { href: `#/data/${encodeURIComponent(inst.domain)}` }, `Browse data of ${inst.domain}`)),
    copied);
}

async function copy(input, region) {
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    input.select(); // no clipboard access (an insecure origin): leave it selected to copy by hand
    report(region, 'Selected: press Ctrl+C (⌘C) to copy.');
    return;
  }
  report(region, 'Token copied.');
}
