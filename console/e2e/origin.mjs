// Tenant content cannot act as the service: run by
// console/origin_e2e_test.go against a real server whose instance
// origin.test has webhooks a tenant wrote (page: an HTML page whose
// script attacks the origin; sw: a service worker's script that asks for
// scope "/"; jsredirect: a redirect to javascript:). node origin.mjs,
// with CORE_URL, CORE_ADMIN_TOKEN, CORE_HOOKS (the instance's webhook
// base URL), CORE_PROBE_WORKER (a service worker of the origin's own, the
// test server's, for the console's guard) and CHROMIUM.
//
// The page reports what its script managed to a channel this script owns
// (an HTTP server on loopback). The same page served from the channel's
// own origin is the control: there its script runs and reports, so that
// silence from the service's origin means the script was stopped, not
// that the channel is broken. Each attempt is also checked by its effect
// (the browser's cookies and service workers, the console's storage).
// It waits for events, never for a fixed time, and prints "ok" at the end.
import { channel, launch, need, waitFor } from './browser.mjs';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const hooks = need('CORE_HOOKS');
const probeWorker = need('CORE_PROBE_WORKER');

// The channel: every /hit is kept; /control.html is the tenant's page.
let controlPage = '';
const ch = await channel((path) => (path === '/control.html' ? controlPage : undefined));
const { hits } = ch;
const channelServer = ch.server;
const channelURL = ch.url;
const serviceOrigin = new URL(base).origin;
// The control is served on another host name than the service's (cookies
// are kept per host, whatever the port), so that what it sets stays its.
const controlOrigin = ch.otherOrigin;

const failures = [];
function expect(cond, message) { if (!cond) failures.push(message); }

const browser = await launch();

try {
  const context = await browser.newContext();
  context.setDefaultTimeout(15000);

  // 1. The operator signs in; the console keeps the admin token in the
  // tab's sessionStorage.
  const tab = await context.newPage();
  await tab.goto(base + '/console/');
  await tab.getByLabel('Admin token').fill(adminToken);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('heading', { name: 'Apps and releases', level: 1 }).waitFor();
  if (await tab.evaluate(() => sessionStorage.getItem('core.console.adminToken')) !== adminToken) {
    throw new Error('the console did not keep the admin token: nothing to protect');
  }
  // The data browser gets the instance's admin session (a token that acts
  // as its instance token), kept beside the admin token: also to protect.
  await tab.goto(base + '/console/#/data/origin.test');
  await tab.getByRole('navigation', { name: 'Record types' }).waitFor();
  const adminSession = await tab.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('core.console.adminSessions') || '{}')['origin.test'];
    return s && s.token;
  });
  if (!adminSession || !adminSession.startsWith('cs2.')) throw new Error('the console holds no admin session of origin.test: nothing to protect');

  // 2. The control: the tenant's page on another origin runs its script
  // and reaches the channel.
  const pageURL = `${hooks}/page?report=${encodeURIComponent(channelURL)}`;
  controlPage = await (await fetch(pageURL)).text();
  const control = await context.newPage();
  await control.goto(controlOrigin + '/control.html');
  await waitFor(() => hits.some((h) => h.kind === 'done' && h.from === controlOrigin), 'the control page to report');
  await control.close();
  console.log('control: the tenant page\'s script runs and reports on its own origin');

  // 3. The tenant's page in the console's tab, on the service's origin.
  const res = await tab.goto(pageURL);
  expect(res.status() === 200, `the tenant page answered ${res.status()}`);
  await tab.getByRole('heading', { name: 'Tenant page' }).waitFor();
  const headers = res.headers();
  console.log(`tenant page: content-security-policy: ${headers['content-security-policy']}; x-content-type-options: ${headers['x-content-type-options']}`);
  const ran = await tab.locator('html').getAttribute('data-ran');
  if (ran) {
    // Its script ran: let it finish before looking at what it did.
    await waitFor(() => hits.some((h) => h.kind === 'done' && h.from === serviceOrigin), 'the tenant page to finish');
  }
  expect(!ran, 'the tenant page ran script on the service\'s origin');
  for (const h of hits.filter((x) => x.from === serviceOrigin)) {
    const leak = h.value.includes(adminToken) ? ' (THE ADMIN TOKEN)' : '';
    expect(h.kind.endsWith('-failed') || h.kind === 'ran' || h.kind === 'done', `the tenant page's ${h.kind} succeeded: ${h.value}${leak}`);
  }
  console.log(`tenant page: its script ${ran ? 'ran' : 'did not run'}; reports from the service's origin: ${JSON.stringify(hits.filter((x) => x.from === serviceOrigin))}`);

  // Its cookie stays on its own path; nothing reaches the console's.
  const consoleCookies = await context.cookies(base + '/console/');
  expect(consoleCookies.length === 0, `cookies reach /console/: ${JSON.stringify(consoleCookies)}`);
  const own = await context.cookies(pageURL);
  expect(own.some((c) => c.name === 'tenant' && c.path === new URL(pageURL).pathname),
    `the tenant's own cookie is not kept on its own path: ${JSON.stringify(own)}`);

  // No service worker of the origin.
  expect(context.serviceWorkers().length === 0, `service workers run: ${context.serviceWorkers().map((w) => w.url())}`);

  // 4. Even a script of the origin cannot make a webhook a service
  // worker: the browser's request for the script is refused.
  const probe = await context.newPage();
  await probe.goto(base + '/healthz');
  const registration = await probe.evaluate(async (u) => {
    try { const r = await navigator.serviceWorker.register(u, { scope: '/' }); return 'registered with scope ' + r.scope; } catch (e) { return 'refused: ' + e.message; }
  }, `${hooks}/sw?report=${encodeURIComponent(channelURL)}`);
  console.log(`registering the tenant's worker: ${registration}`);
  expect(registration.startsWith('refused'), `the tenant's service worker was ${registration}`);

  // 5. A redirect to javascript: is refused by the server.
  let redirect;
  try {
    const r = await probe.goto(hooks + '/jsredirect');
    redirect = `${r.status()} ${await r.text()}`;
  } catch (e) {
    redirect = `navigation failed: ${e.message.split('\n')[0]}`;
  }
  console.log(`javascript: redirect: ${redirect}`);
  expect(redirect.startsWith('502 ') && redirect.includes('BAD_GATEWAY'), `the javascript: redirect answered ${redirect}, want 502 BAD_GATEWAY`);
  await probe.close();

  // 6. A new tab opening the console is controlled by no worker; signing
  // in there sends the token nowhere else.
  const second = await context.newPage();
  await second.goto(base + '/console/');
  expect(await second.evaluate(() => navigator.serviceWorker.controller === null), 'a new console tab is controlled by a service worker');
  await second.getByLabel('Admin token').fill(adminToken);
  await second.getByRole('button', { name: 'Sign in' }).click();
  await second.getByRole('heading', { name: 'Apps and releases', level: 1 }).waitFor();
  await second.close();

  // The first tab is still signed in: nothing cleared its token.
  await tab.goto(base + '/console/');
  await tab.getByRole('heading', { name: 'Apps and releases', level: 1 }).waitFor();

  // 7. The console's own guard: a service worker registered on the origin
  // by something else (here the test server's probe worker) is removed
  // when the console loads, and a console loaded through it stops before
  // the sign-in.
  const setup = await context.newPage();
  await setup.goto(base + '/healthz');
  await setup.evaluate(async (u) => { await navigator.serviceWorker.register(u, { scope: '/' }); await navigator.serviceWorker.ready; }, base + probeWorker);
  await setup.close();
  const guarded = await context.newPage();
  await guarded.goto(base + '/console/');
  expect(await guarded.evaluate(() => navigator.serviceWorker.controller !== null), 'the probe worker did not control the console: the guard is not tested');
  await guarded.getByRole('heading', { name: 'Service worker removed' }).waitFor();
  expect(!(await guarded.getByLabel('Admin token').isVisible()), 'the console asked for the token while a service worker controlled it');
  expect(await guarded.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length) === 0, 'the guard left a registration');
  await guarded.reload();
  await guarded.getByLabel('Admin token').waitFor();
  expect(await guarded.evaluate(() => navigator.serviceWorker.controller === null), 'the console is still controlled after the guard');
  console.log('guard: a console loaded through a service worker removed it and stopped before the sign-in');

  // Last: the token never reached the channel, from anywhere.
  expect(!hits.some((h) => h.value.includes(adminToken)), 'the admin token reached the tenant\'s channel');
  expect(!hits.some((h) => h.value.includes(adminSession)), 'the console\'s admin session reached the tenant\'s channel');
} catch (e) {
  failures.push(`${e.message}`);
} finally {
  await browser.close();
  channelServer.close();
}

if (failures.length > 0) {
  console.error('FAILURES:\n' + failures.map((f) => ' - ' + f).join('\n'));
  process.exit(1);
}
console.log('ok');
