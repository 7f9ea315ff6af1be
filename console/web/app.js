// The console's views, one per hash route (#/apps, #/apps/{app}/{release},
// #/instances, #/data/{domain}/{type}, #/graphql/{domain},
// #/functions/{app}, #/hooks/{domain}, #/files/{domain}, #/mail/{domain},
// #/reactions/{domain}, #/backups):
// the page itself is one static file.
import { admin, describe, session, whenUnauthenticated } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';
import { sdlEditor } from './editor.js';
import { instancesView as showInstances } from './instances.js';
import { dataView } from './data.js';
import { playgroundLink, playgroundView } from './playground.js';
import { functionsView, hooksLink, hooksView } from './functions.js';
import { filesLink, filesView } from './files.js';
import { mailLink, mailView } from './mail.js';
import { backupsView } from './backups.js';
import { reactionsLink, reactionsView } from './reactions.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const signOutButton = document.getElementById('sign-out');

// draft is SDL carried from a release's view to the publish form.
let draft = null;

signOutButton.addEventListener('click', () => {
  session.signOut();
  location.hash = '';
  render();
});

whenUnauthenticated((r) => {
  session.signOut();
  signIn('Signed out: ' + describe(r));
});

// The console never uses a service worker. One registered on this origin
// by anything else could read every request the page makes, the admin
// token among them: before the token is read or asked for, every
// registration is removed, and a page that was itself loaded through one
// stops there.
if (await dropServiceWorkers()) {
  controlledView();
} else {
  window.addEventListener('hashchange', render);
  render();
}

// dropServiceWorkers unregisters every service worker of the origin and
// reports whether this page is controlled by one.
async function dropServiceWorkers() {
  if (!('serviceWorker' in navigator)) return false; // none outside a secure context
  try {
    const regs = await navigator.serviceWorker.getRegistrations();
    await Promise.all(regs.map((r) => r.unregister()));
  } catch { /* none can be read: none can be ours */ }
  return navigator.serviceWorker.controller !== null;
}

function controlledView() {
  heading('Service worker removed');
  main.append(h('p', { class: 'alert error', role: 'alert' },
    'This page was loaded through a service worker, which the console never uses: something else on this origin registered it. ' +
    'It has been removed. Do not sign in here: close this tab and open the console again.'));
}

function render() {
  if (!session.token()) { signIn(); return; }
  nav.hidden = false;
  signOutButton.hidden = false;
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  for (const a of nav.querySelectorAll('a')) {
    if (a.getAttribute('href') === '#/' + parts[0]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  switch (parts[0]) {
    case 'instances': return instancesView();
    case 'data': return dataView(main, parts[1] || '', parts[2] || '', parts[1] ? withTools(parts[1]) : heading);
    case 'graphql': return parts[1] ? playgroundView(main, parts[1], heading) : location.replace('#/data');
    case 'functions': return functionsView(main, parts[1] || '', heading);
    case 'hooks': return parts[1] ? hooksView(main, parts[1], heading) : location.replace('#/functions');
    case 'files': return parts[1] ? filesView(main, parts[1], heading) : location.replace('#/data');
    case 'mail': return parts[1] ? mailView(main, parts[1], heading) : location.replace('#/instances');
    case 'backups': return backupsView(main, heading);
    case 'reactions': return parts[1] ? reactionsView(main, parts[1], heading) : location.replace('#/instances');
    case 'apps':
      if (parts[1] && parts[2]) return releaseView(parts[1], parts[2]);
      return appsView();
    default:
      location.replace('#/apps');
      return undefined;
  }
}

// heading starts a view with its h1 and moves the focus to it, so a screen
// reader announces the new view.
function heading(text) {
  const h1 = h('h1', { tabindex: '-1' }, text);
  replace(main, h1);
  document.title = text + ' · Core console';
  h1.focus();
  return h1;
}

// withTools is heading plus an instance's links to its other views.
function withTools(domain) {
  return (text) => {
    const h1 = heading(text);
    main.append(h('p', { class: 'inline' }, playgroundLink(domain), hooksLink(domain), filesLink(domain), mailLink(domain), reactionsLink(domain)));
    return h1;
  };
}

function signIn(message) {
  nav.hidden = true;
  signOutButton.hidden = true;
  heading('Sign in');
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const err = alert();
  if (message) report(err, message, true);
  const form = h('form', { class: 'card narrow', onsubmit: async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    report(err, '');
    // The token is checked by calling the admin API with it, as any
    // client would; it is kept only if the server accepts it.
    const r = await admin('GET', '/apps', undefined, input.value.trim());
    button.disabled = false;
    if (!r.ok) { report(err, 'Sign-in failed: ' + describe(r), true); input.select(); return; }
    session.signIn(input.value.trim());
    location.hash = '#/apps';
    render();
  } },
  h('p', {}, 'Sign in with the admin token that cored printed on its first start (or CORE_ADMIN_TOKEN). It stays in this tab only.'),
  field('Admin token', input), button, err);
  main.append(form);
}

// ---- apps and releases ----

async function appsView() {
  heading('Apps and releases');
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  main.append(list);
  const editor = sdlEditor({ label: 'SDL', value: draft ? draft.sdl : '' });
  const appInput = h('input', { name: 'app', required: true, list: 'known-apps', autocomplete: 'off', value: draft ? draft.app : '' });
  const relInput = h('input', { name: 'release', required: true, autocomplete: 'off' });
  const realmInput = h('input', { name: 'realm', autocomplete: 'off', value: draft ? draft.realm : '' });
  const datalist = h('datalist', { id: 'known-apps' });
  const publish = h('button', { type: 'submit' }, 'Publish release');
  const msg = status();
  const err = alert();
  draft = null;
  const form = h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    publish.disabled = true;
    report(msg, ''); report(err, '');
    const app = appInput.value.trim(); const rel = relInput.value.trim();
    const body = { schema: editor.value };
    if (realmInput.value.trim()) body.realm = realmInput.value.trim();
    const r = await admin('PUT', `/apps/${encodeURIComponent(app)}/releases/${encodeURIComponent(rel)}`, body);
    publish.disabled = false;
    if (!r.ok) {
      editor.setErrors(r.errors);
      const n = r.errors.length;
      report(err, n > 1 ? `Not published: ${n} errors (listed under the SDL).` : 'Not published: ' + describe(r), true);
      return;
    }
    editor.setErrors([]);
    report(msg, `Published ${r.body.app}/${r.body.release}: ${r.body.status}.`);
    loadApps(list, datalist);
  } },
  h('h2', {}, 'Publish a release'),
  h('div', { class: 'row' }, field('App', appInput), field('Release', relInput), field('Realm (optional)', realmInput)),
  datalist, editor.el, publish, msg, err);
  main.append(form);
  loadApps(list, datalist);
}

async function loadApps(list, datalist) {
  const r = await admin('GET', '/apps');
  list.removeAttribute('aria-busy');
  if (!r.ok) { replace(list, h('p', { class: 'alert error', role: 'alert' }, describe(r))); return; }
  const apps = r.body.apps;
  replace(datalist, apps.map((a) => h('option', { value: a.app })));
  if (apps.length === 0) { replace(list, h('p', {}, 'No apps yet: publish a first release below.')); return; }
  replace(list, apps.map((a) => h('section', { class: 'card' },
    h('h2', {}, a.app),
    h('div', { class: 'scroll' }, h('table', {},
      h('caption', { class: 'sr-only' }, `Releases of ${a.app}`),
      h('thead', {}, h('tr', {}, ['Release', 'Realm', 'Types', 'Instances', 'SDL'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, a.releases.map((rel) => h('tr', {},
        h('th', { scope: 'row' }, rel.release),
        h('td', {}, rel.realm || '—'),
        h('td', {}, rel.types.join(', ') || '—'),
        h('td', {}, rel.instances.join(', ') || '—'),
        h('td', {}, h('a', { href: `#/apps/${encodeURIComponent(a.app)}/${encodeURIComponent(rel.release)}`,
          'aria-label': `View SDL of ${a.app}/${rel.release}` }, 'View SDL'))))))))));
}

async function releaseView(app, release) {
  heading(`Release ${app}/${release}`);
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  main.append(h('p', {}, h('a', { href: '#/apps' }, '← Apps and releases')), body);
  const r = await admin('GET', `/apps/${encodeURIComponent(app)}/releases/${encodeURIComponent(release)}`);
  body.removeAttribute('aria-busy');
  if (!r.ok) { replace(body, h('p', { class: 'alert error', role: 'alert' }, describe(r))); return; }
  const v = r.body;
  const editor = sdlEditor({ label: `SDL of ${app}/${release}`, value: v.schema, readOnly: true });
  replace(body, h('dl', { class: 'facts' },
    h('dt', {}, 'Realm'), h('dd', {}, v.realm || '—'),
    h('dt', {}, 'Types'), h('dd', {}, v.types.join(', ') || '—'),
    h('dt', {}, 'Instances'), h('dd', {}, v.instances.join(', ') || '—')),
  editor.el,
  h('button', { type: 'button', onclick: () => { draft = { app, realm: v.realm, sdl: v.schema }; location.hash = '#/apps'; } },
    'Publish a new release from this SDL'));
}

// ---- instances (instances.js) ----

function instancesView() { return showInstances(main, heading); }
