// The console's browser test, run by console/e2e_test.go against a real
// server: node console.mjs, with CORE_URL (the server), CORE_ADMIN_TOKEN,
// CORE_ARTIFACTS (where the screenshots go) and CHROMIUM (the browser).
//
// It waits for elements and text, never for a fixed time, and asserts
// nothing about timing.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const artifacts = need('CORE_ARTIFACTS');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
mkdirSync(artifacts, { recursive: true });

function need(name) {
  const v = process.env[name];
  if (!v) { console.error(`${name} is not set`); process.exit(2); }
  return v;
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  // Debian's chromium as root in a closed network: no sandbox, and no
  // background connections that the network would refuse.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});

let step = 0;
let page;
async function shot(name) {
  step += 1;
  const file = path.join(artifacts, `${String(step).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot ${file}`);
}

function expect(cond, message) { if (!cond) throw new Error(message); }

// visible waits (Playwright's own polling, up to the default time-out)
// for a locator to show.
async function visible(locator) { await locator.first().waitFor({ state: 'visible' }); return locator.first(); }

const failures = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  // The browser logs every 4xx the console asks for on purpose (a wrong
  // token, an SDL error); any other console error is a failure.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) failures.push(`console error: ${m.text()}`);
  });
  // The console loads nothing from elsewhere.
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) failures.push(`request off the server: ${r.url()}`); });

  await page.goto(base + '/console/');

  // 1. A wrong token: an error, and nothing else.
  await page.getByLabel('Admin token').fill('not-the-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alertBox = await visible(page.getByRole('alert').filter({ hasText: 'Sign-in failed' }));
  expect((await alertBox.innerText()).includes('invalid admin token'), 'the wrong token\'s error does not say so');
  expect(!(await page.getByRole('navigation', { name: 'Console' }).isVisible()), 'navigation shown after a wrong token');
  expect(!(await page.getByRole('button', { name: 'Sign out' }).isVisible()), 'Sign out shown after a wrong token');
  expect(await page.evaluate(() => sessionStorage.length) === 0, 'a wrong token was stored');
  await shot('wrong-token');
  // The failed sign-in was refused by the admin API itself.
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await visible(page.getByRole('heading', { name: 'Apps and releases', level: 1 }));
  expect(await page.evaluate(() => document.cookie) === '', 'the console set a cookie');
  expect(!page.url().includes(adminToken), 'the token is in the URL');
  await shot('signed-in');

  // 2. Publish a release with an error, then fixed.
  await page.getByLabel('App', { exact: true }).fill('shop');
  await page.getByLabel('Release', { exact: true }).fill('v1');
  const broken = 'type Product {\n  name: String\n  price: Flot\n  stock: Int\n}\n';
  await page.getByLabel('SDL', { exact: true }).fill(broken);
  await page.getByRole('button', { name: 'Publish release' }).click();
  const lineButton = await visible(page.getByRole('button', { name: /^Line 3, column \d+$/ }));
  await visible(page.locator('.editor .ln.err', { hasText: /^3$/ }));
  await visible(page.locator('.editor .note', { hasText: 'Flot' }));
  await lineButton.click();
  await shot('sdl-error');
  await page.getByLabel('SDL', { exact: true }).fill(broken.replace('Flot', 'Float'));
  await page.getByRole('button', { name: 'Publish release' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Published shop/v1: created.' }));
  expect(await page.locator('.editor .ln.err').count() === 0, 'the error marks stay after the fix');
  await visible(page.getByRole('link', { name: 'View SDL of shop/v1' }));
  await shot('sdl-published');
  // A second release, for the release swap.
  await page.getByLabel('Release', { exact: true }).fill('v2');
  await page.getByLabel('SDL', { exact: true }).fill(broken.replace('Flot', 'Float').replace('stock: Int', 'stock: Int\n  sku: String'));
  await page.getByRole('button', { name: 'Publish release' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Published shop/v2: created.' }));
  await page.getByRole('link', { name: 'View SDL of shop/v1' }).click();
  await visible(page.getByRole('heading', { name: 'Release shop/v1' }));
  expect((await page.getByLabel('SDL of shop/v1', { exact: true }).inputValue()).includes('price: Float'), 'the release view does not show the SDL');
  await shot('release-sdl');

  // 3. Create an instance; its token is shown once, with a copy button.
  await page.getByRole('link', { name: 'Instances' }).click();
  await visible(page.getByRole('heading', { name: 'Instances', level: 1 }));
  await page.getByLabel('Domain').fill('shop.local');
  await page.getByLabel('App', { exact: true }).selectOption('shop');
  await page.getByLabel('Release', { exact: true }).selectOption('v1');
  await page.getByRole('button', { name: 'Create instance' }).click();
  const tokenField = await visible(page.getByLabel('Instance token of shop.local'));
  const instanceToken = await tokenField.inputValue();
  expect(instanceToken.length > 10, 'no instance token shown');
  await visible(page.getByRole('button', { name: 'Copy token' }));
  await visible(page.getByRole('rowheader', { name: 'shop.local' }));
  await shot('instance-created');
  // Change its release (the live swap).
  await page.getByLabel('Release of shop.local', { exact: true }).selectOption('v2');
  await page.getByRole('button', { name: 'Change release of shop.local' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'shop.local now runs shop/v2.' }));
  await shot('release-changed');

  // 4. The data browser: types from introspection, create, filter, page.
  // Twelve records go in through the instance's API, as any client would.
  const seed = await fetch(base + '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'core-domain': 'shop.local', authorization: instanceToken },
    body: JSON.stringify({
      query: 'mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
      variables: { v: { Product: Array.from({ length: 12 }, (_, i) => ({ name: `Seed ${i + 1}`, price: i + 1, stock: 1 })) } },
    }),
  });
  expect(seed.ok, `seeding answered ${seed.status}`);
  await page.getByRole('link', { name: 'Browse data of shop.local' }).first().click();
  await visible(page.getByRole('heading', { name: 'Data of shop.local', level: 1 }));
  await page.getByRole('navigation', { name: 'Record types' }).getByRole('link', { name: 'Product', exact: true }).click();
  await visible(page.getByRole('heading', { name: 'Product', level: 2 }));
  await visible(page.getByRole('cell', { name: 'Seed 1', exact: true }));
  // Create a record through the form.
  await page.getByLabel('name (String)').fill('Teapot');
  await page.getByLabel('price (Float)').fill('42.5');
  await page.getByLabel('stock (Int)').fill('3');
  await page.getByLabel('sku (String)').fill('TP-1');
  await page.getByRole('button', { name: 'Create Product' }).click();
  await visible(page.getByRole('status').filter({ hasText: /^Created Product / }));
  await shot('record-created');
  // Filter.
  await page.getByLabel('ArcQL filter').fill("name = 'Teapot'");
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await visible(page.getByRole('cell', { name: 'TP-1' }));
  await page.getByRole('cell', { name: 'Seed 1', exact: true }).waitFor({ state: 'detached' });
  expect(await page.locator('table tbody tr').count() === 1, 'the filter shows more than the teapot');
  await shot('filtered');
  // A filter the server refuses shows its words.
  await page.getByLabel('ArcQL filter').fill('price >');
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await visible(page.getByRole('alert').filter({ hasText: 'BAD_FILTER' }));
  await shot('bad-filter');
  // Page: 13 records, 10 a page.
  await page.getByLabel('ArcQL filter').fill('* SORT price');
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await visible(page.getByRole('cell', { name: 'Seed 1', exact: true }));
  expect(await page.locator('table tbody tr').count() === 10, 'the first page does not hold 10 records');
  await page.getByRole('button', { name: 'Next page' }).click();
  await visible(page.getByRole('cell', { name: 'Teapot' }));
  await visible(page.getByText('Page 2'));
  expect(await page.locator('table tbody tr').count() === 3, 'the second page does not hold 3 records');
  expect(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'Next page is enabled on the last page');
  await shot('page-2');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await visible(page.getByRole('cell', { name: 'Seed 1', exact: true }));
  await visible(page.getByText('Page 1'));

  // 5. The phone size, in the system's dark scheme.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await visible(page.getByRole('heading', { name: 'Product', level: 2 }));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow <= 0, `the page scrolls sideways at 390 px (by ${overflow} px)`);
  await shot('phone-dark');

  // 6. Every control has an accessible name (on the views visited last).
  // Each view is checked once its last part has come.
  for (const [hash, last] of [['#/apps', 'View SDL of shop/v2'], ['#/instances', 'Change release of shop.local'],
    ['#/data/shop.local/Product', 'Next page']]) {
    await page.goto(base + '/console/' + hash);
    await visible(page.getByRole(last.startsWith('View') ? 'link' : 'button', { name: last }));
    await page.locator('[aria-busy]').first().waitFor({ state: 'detached' });
    const unnamed = await page.evaluate(unnamedControls);
    expect(unnamed.length === 0, `controls without an accessible name on ${hash}: ${unnamed.join(', ')}`);
  }

  // The playground, functions and webhooks (playgroundAndFunctions below).
  await playgroundAndFunctions(instanceToken);

  // 7. Sign out forgets the token.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await visible(page.getByLabel('Admin token'));
  expect(await page.evaluate(() => sessionStorage.length) === 0, 'sign out left something in sessionStorage');
  await shot('signed-out');
} catch (e) {
  if (page) await shot('failure').catch(() => {});
  failures.unshift(e.stack || String(e));
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log('ok');

// ---- The GraphQL playground, functions and webhooks (issue 17, items 5 and 6) ----

// adminCall and instanceCall set up what the console then shows, through
// the public APIs as any client would.
async function adminCall(method, path, body) {
  const res = await fetch(base + '/admin/v1' + path, {
    method, headers: { 'content-type': 'application/json', authorization: adminToken }, body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.ok, `${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

async function instanceCall(domain, token, query, variables = {}) {
  const res = await fetch(base + '/graphql', {
    method: 'POST', headers: { 'content-type': 'application/json', 'core-domain': domain, authorization: token },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  expect(res.ok && !body.errors, `${query} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

async function checkNamed(where) {
  await page.locator('[aria-busy]').first().waitFor({ state: 'detached' });
  const unnamed = await page.evaluate(unnamedControls);
  expect(unnamed.length === 0, `controls without an accessible name on ${where}: ${unnamed.join(', ')}`);
}

async function playgroundAndFunctions(shopToken) {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });

  // Run a query in the playground, reached from the instance's row, with
  // the completion list taking a field name.
  await page.goto(base + '/console/#/instances');
  await page.getByRole('link', { name: 'GraphQL of shop.local' }).click();
  await visible(page.getByRole('heading', { name: 'GraphQL of shop.local', level: 1 }));
  await visible(page.getByRole('button', { name: 'Query', exact: true })); // the docs pane's root type
  const editor = page.getByLabel('Query', { exact: true });
  await editor.fill('{\n  find(type: Product, arcql: "name = \'Teapot\'") {\n    edges { node { ... on Product { sku ');
  await editor.press('End');
  // Ctrl+Space lists Product's fields; the arrows move the active one; Escape closes.
  const listbox = page.getByRole('listbox', { name: 'Suggestions' });
  await editor.press('Control+Space');
  await visible(listbox.getByRole('option', { name: /^stock/ }));
  const first = await editor.getAttribute('aria-activedescendant');
  await editor.press('ArrowDown');
  await visible(listbox.getByRole('option', { selected: true }));
  expect(await editor.getAttribute('aria-activedescendant') !== first, 'ArrowDown does not move the active suggestion');
  await editor.press('Escape');
  await listbox.waitFor({ state: 'hidden' });
  await editor.pressSequentially('pri');
  await visible(listbox.getByRole('option', { name: /^price/ }));
  expect(await editor.getAttribute('aria-activedescendant'), 'the text area does not point at the active suggestion');
  await shot('playground-completion');
  await editor.press('Enter');
  await listbox.waitFor({ state: 'hidden' });
  await editor.pressSequentially(' name } } }');
  await editor.press('Enter');
  await editor.pressSequentially('}');
  await editor.press('Enter');
  await editor.pressSequentially('}');
  expect((await editor.inputValue()).includes('... on Product { sku price name } } }'), `completion did not take "price": ${await editor.inputValue()}`);
  await editor.press('Control+Enter');
  const response = page.getByRole('region', { name: 'Response' });
  await visible(response.filter({ hasText: '"name": "Teapot"' }));
  expect((await response.innerText()).includes('"price": 42.5'), 'the response lacks the teapot\'s price');
  await visible(page.getByRole('status').filter({ hasText: '200 OK' }));
  // Completion knows arguments and type conditions too (the module, in
  // this page, on the instance's own introspection).
  const suggested = await page.evaluate(async () => {
    const c = await import('./completion.js');
    const res = await fetch('../graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'core-domain': 'shop.local',
      authorization: JSON.parse(sessionStorage.getItem('core.console.instanceTokens'))['shop.local'] }, body: JSON.stringify({ query: c.INTROSPECT }) });
    const s = c.model((await res.json()).data);
    const at = (doc) => c.complete(s, doc.replace('|', ''), doc.indexOf('|')).items.map((i) => i.label);
    return { args: at('{ find(ty|'), value: at('{ find(type: |'), on: at('{ find(type: Product) { edges { node { ... on P|'),
      nested: at('query { find(type: Product) { edges { node { ... on Product { core { cre|'), top: at('q|') };
  });
  expect(suggested.args[0] === 'type', `arguments: ${suggested.args}`);
  expect(suggested.value.includes('Product'), `argument values: ${suggested.value}`);
  expect(suggested.on.includes('Product'), `type conditions: ${suggested.on}`);
  expect(suggested.nested[0] === 'created', `nested fields: ${suggested.nested}`);
  expect(suggested.top[0] === 'query', `keywords: ${suggested.top}`);
  // The docs pane: a root type's fields, then a type from there.
  await page.getByRole('region', { name: 'Docs' }).getByRole('button', { name: 'Query', exact: true }).first().click();
  await visible(page.getByRole('heading', { name: /^Query/, level: 3 }));
  const docs = page.getByRole('region', { name: 'Docs' });
  await docs.getByRole('button', { name: 'CoreFilterConnection', exact: true }).first().click();
  await visible(page.getByRole('heading', { name: /^CoreFilterConnection/, level: 3 }));
  await docs.getByRole('button', { name: '← Back' }).click();
  await visible(page.getByRole('heading', { name: /^Query/, level: 3 }));
  await docs.getByLabel('Find a type').fill('Produ');
  await docs.getByRole('button', { name: 'Product', exact: true }).click();
  await visible(page.getByRole('heading', { name: /^Product/, level: 3 }));
  await visible(docs.getByText('sku', { exact: true }));
  await checkNamed('the playground');
  await shot('playground-run');

  // Upload a function version. The app "hooks" binds function hello v1,
  // not published yet, to a field that a Webhook record runs.
  // The function logs a line and answers the webhook with what it got.
  // (The steps run from the main flow's top-level await: constants they
  // use live in here, not below it.)
  const HELLO_JS = `exports.main = function (input, callback) {
  const p = JSON.parse(input.args.payload);
  console.log('hello from the console test: ' + p.body);
  callback({ status: 201, headers: { 'x-console-test': 'yes' }, body: { got: JSON.parse(p.body) } }, null);
};
`;
  await adminCall('PUT', '/apps/hooks/releases/v1', { schema: 'type Mutation { hello(payload: WebhookPayload): WebhookResponse @fn(name: "hello", version: "v1") }' });
  const hooks = await adminCall('POST', '/instances', { domain: 'hooks.local', app: 'hooks', release: 'v1', anonymousRequests: true });
  await instanceCall('hooks.local', hooks.token, 'mutation { upsert(values: {Webhook: [{name: "hello", query: {type: Mutation, field: "hello"}}]}) { id } }');
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Functions' }).click();
  await page.getByRole('link', { name: 'Functions of hooks' }).click();
  await visible(page.getByRole('heading', { name: 'Functions of hooks', level: 1 }));
  await visible(page.getByText('No function versions yet'));
  await page.getByLabel('File').setInputFiles({ name: 'hello.js', mimeType: 'text/javascript', buffer: Buffer.from(HELLO_JS) });
  expect(await page.getByLabel('Function', { exact: true }).inputValue() === 'hello', 'the function name is not taken from the file');
  await page.getByLabel('Version', { exact: true }).fill('v1');
  await page.getByRole('button', { name: 'Upload version' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Published hello v1: created.' }));
  await visible(page.getByRole('button', { name: 'Delete hello v1' }));
  await checkNamed('the function versions');
  await shot('function-uploaded');

  // A webhook test send shows status, headers and body.
  await page.getByRole('link', { name: 'Function log and webhooks of hooks.local' }).click();
  await visible(page.getByRole('heading', { name: 'Functions and webhooks of hooks.local', level: 1 }));
  await page.getByLabel('Instance token').fill(hooks.token);
  await page.getByRole('button', { name: 'Use token' }).click();
  await visible(page.getByRole('cell', { name: base + '/webhook/hooks.local/hello' }));
  await page.getByRole('button', { name: 'Send test to hello' }).click();
  expect(await page.getByLabel('Webhook URL').inputValue() === base + '/webhook/hooks.local/hello', 'Send test did not fill in the URL');
  await page.getByLabel('Body').fill('{"ping": 1}');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await visible(page.getByText('Status 201'));
  await visible(page.getByRole('rowheader', { name: 'x-console-test' }));
  await visible(page.getByRole('region', { name: 'Response body' }).filter({ hasText: '"ping": 1' }));
  await shot('webhook-test-sent');

  // Read the function log entry: the log view refreshes by itself.
  await visible(page.getByRole('cell', { name: 'hello from the console test: {"ping": 1}' }));
  await visible(page.getByRole('cell', { name: 'hello@v1' }));
  await checkNamed('the function log and webhooks');
  await shot('function-log');

  // The playground at the phone size, in the dark scheme.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(base + '/console/#/graphql/shop.local');
  await visible(page.getByRole('button', { name: 'Query', exact: true }));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow <= 0, `the playground scrolls sideways at 390 px (by ${overflow} px)`);
  await shot('playground-phone-dark');
}

// unnamedControls lists the buttons, links and fields with no name a
// screen reader could say (label, aria-label, aria-labelledby, content).
function unnamedControls() {
  const out = [];
  for (const el of document.querySelectorAll('button, a[href], input, select, textarea')) {
    if (el.type === 'hidden' || el.closest('[hidden]')) continue;
    const named = (el.getAttribute('aria-label') || '').trim() || el.getAttribute('aria-labelledby')
      || (el.labels && [...el.labels].some((l) => l.textContent.trim()))
      || (['BUTTON', 'A'].includes(el.tagName) && el.textContent.trim());
    if (!named) out.push(el.outerHTML.slice(0, 80));
  }
  return out;
}
