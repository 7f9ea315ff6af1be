// The console's browser test, run by console/e2e_test.go against a real
// server: node console.mjs, with CORE_URL (the server), CORE_ADMIN_TOKEN,
// CORE_ARTIFACTS (where the screenshots go) and CHROMIUM (the browser).
//
// It waits for elements and text, never for a fixed time, and asserts
// nothing about timing.
import { launch, need } from './browser.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const artifacts = need('CORE_ARTIFACTS');
mkdirSync(artifacts, { recursive: true });

const browser = await launch();

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

  // 4b. Records one at a time, sort, trash and delete (dataRecordSteps);
  // 4c. one instance's settings, token and deletion (instanceSteps).
  const rotatedToken = await dataRecordSteps(instanceToken).then(() => instanceSteps(instanceToken));
  await page.goto(base + '/console/#/data/shop.local/Product');
  await visible(page.getByRole('cell', { name: 'Seed 1', exact: true }));
  expect(rotatedToken !== instanceToken, 'the token did not change');

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
  await playgroundAndFunctions(rotatedToken);

  // Data with the admin token alone: owners, references, grants
  // (adminTokenOnlySteps below).
  await adminTokenOnlySteps(instanceToken);

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

// ---- 4b. The data browser's records: open, edit, sort, trash, delete ----

// dataRecordSteps publishes shop/v3 (a Shelf holding a list of Products)
// and moves shop.local to it through the admin API, then, in the console:
// sorts Products by a column both ways (paging on), edits a Product in
// its form, fills a Shelf's list of references (adding and removing),
// trashes and untrashes the Product (seen through includeTrashed), and
// deletes it, taking the clearArrayReferences offer.
async function dataRecordSteps(token) {
  const v3 = 'type Product {\n  name: String\n  price: Float\n  stock: Int\n  sku: String\n}\n\n'
    + 'interface Named {\n  name: String\n}\n\n'
    + 'type Shelf implements Named {\n  name: String\n  featured: Product\n  products: [Product!]\n}\n';
  await adminCall('PUT', '/apps/shop/releases/v3', { schema: v3 });
  await adminCall('PATCH', '/instances/shop.local', { release: 'v3' });
  const found = await graphqlCall(token, `{ find(type: Product, arcql: "name = 'Teapot' OR name = 'Seed 1'") { edges { node { ... on Product { name core { id } } } } } }`);
  const ids = Object.fromEntries(found.data.find.edges.map((e) => [e.node.name, e.node.core.id]));
  expect(ids.Teapot && ids['Seed 1'], 'the seeded products are not found');

  // A heading's sort replaces the filter's SORT clause, found outside
  // quotes (model.js, as the page loads it).
  const sorts = await page.evaluate(async () => {
    const m = await import('./model.js');
    return ['*', '', "price > 5 SORT name DESC", "name = 'a SORT b' SORT price DESC, name", "name = 'it\\'s SORT'"]
      .map((f) => m.withSort(f, 'price', true));
  });
  const wantSorts = ['* SORT price DESC', '* SORT price DESC', 'price > 5 SORT price DESC',
    "name = 'a SORT b' SORT price DESC", "name = 'it\\'s SORT' SORT price DESC"];
  expect(JSON.stringify(sorts) === JSON.stringify(wantSorts), `withSort answered ${JSON.stringify(sorts)}`);

  // Sort by price, ascending then descending; paging keeps the sort. (A
  // reload: the page shows v2's schema, and a fresh filter.)
  await page.goto(base + '/console/#/data/shop.local/Product');
  await page.reload();
  await visible(page.getByRole('cell', { name: 'Seed 1', exact: true }));
  await page.getByRole('button', { name: 'Sort by price' }).click();
  await visible(page.locator('th[aria-sort="ascending"]', { hasText: 'price' }));
  expect(await page.getByLabel('ArcQL filter').inputValue() === '* SORT price ASC', 'the sort is not in the filter box');
  await visible(page.locator('tbody tr').first().getByRole('cell', { name: 'Seed 1', exact: true }));
  // The second time from the keyboard: the focus stays on the heading.
  await page.getByRole('button', { name: 'Sort by price' }).press('Enter');
  await visible(page.locator('th[aria-sort="descending"]', { hasText: 'price' }));
  expect(await page.evaluate(() => document.activeElement.getAttribute('aria-label')) === 'Sort by price', 'the sort button lost the focus');
  await visible(page.locator('tbody tr').first().getByRole('cell', { name: 'Teapot' }));
  await shot('sorted-desc');
  await page.getByRole('button', { name: 'Next page' }).click();
  await visible(page.getByText('Page 2'));
  await visible(page.locator('tbody tr').last().getByRole('cell', { name: 'Seed 1', exact: true }));
  expect(await page.locator('table tbody tr').count() === 3, 'the sorted second page does not hold 3 records');

  // Open the teapot, edit its price (an upsert), see it in the table.
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.locator('tbody tr').first().getByRole('link', { name: ids.Teapot }).click();
  await visible(page.getByRole('heading', { name: `Product ${ids.Teapot}`, level: 2 }));
  expect(await page.getByLabel('name (String)').inputValue() === 'Teapot', 'the form does not hold the record');
  await page.getByLabel('price (Float)').fill('45.25');
  await page.getByRole('button', { name: 'Save Product' }).click();
  await visible(page.getByRole('status').filter({ hasText: `Saved Product ${ids.Teapot}.` }));
  await shot('record-edited');
  await backToRecords('Product', "name = 'Teapot'");
  await visible(page.getByRole('cell', { name: '45.25' }));
  await shot('edit-in-table');

  // A Shelf, created in the form, whose list of references is edited.
  await page.getByRole('navigation', { name: 'Record types' }).getByRole('link', { name: 'Shelf', exact: true }).click();
  await visible(page.getByRole('heading', { name: 'Shelf', level: 2 }));
  // The interface Shelf implements is no record type of its own.
  expect(await page.getByRole('navigation', { name: 'Record types' }).getByRole('link', { name: 'Named', exact: true }).count() === 0,
    'the interface Named is listed among the record types');
  await page.getByLabel('core.id (optional)').fill('front');
  await page.getByLabel('name (String)').fill('Front shelf');
  await page.getByLabel('featured (Product id)').fill(ids['Seed 1']);
  await page.getByRole('button', { name: 'Create Shelf' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Created Shelf front.' }));
  await page.getByRole('link', { name: 'front', exact: true }).click();
  await visible(page.getByRole('heading', { name: 'Shelf front', level: 2 }));
  await visible(page.getByRole('link', { name: `Open Product ${ids['Seed 1']}` }));
  // One id added with the button, one with Enter in the field.
  await page.getByLabel('Add a Product id to products').fill(ids.Teapot);
  await page.getByRole('button', { name: 'Add to products' }).click();
  await visible(page.getByRole('button', { name: `Remove ${ids.Teapot} from products` }));
  await page.getByLabel('Add a Product id to products').fill(ids['Seed 1']);
  await page.getByLabel('Add a Product id to products').press('Enter');
  await visible(page.getByRole('button', { name: `Remove ${ids['Seed 1']} from products` }));
  expect(!(await page.getByRole('status').filter({ hasText: 'Saved Shelf' }).isVisible()), 'Enter in the id field saved the form');
  await page.getByRole('button', { name: `Remove ${ids['Seed 1']} from products` }).click();
  await page.getByRole('button', { name: `Remove ${ids['Seed 1']} from products` }).waitFor({ state: 'detached' });
  await checkNamed('a record');
  await fitsPhone('record-phone');
  await page.getByRole('button', { name: 'Save Shelf' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Saved Shelf front.' }));
  const shelf = await graphqlCall(token, '{ get(type: Shelf, id: "front") { ... on Shelf { products { core { id } } } } }');
  expect(JSON.stringify(shelf.data.get.products) === JSON.stringify([{ core: { id: ids.Teapot } }]), `the shelf holds ${JSON.stringify(shelf.data.get)}`);
  await shot('references-edited');

  // Trash the teapot (from the shelf's list), see it only with
  // includeTrashed, untrash it.
  await page.getByRole('group', { name: 'products (list of Product)' }).getByRole('link', { name: ids.Teapot }).click();
  await visible(page.getByRole('heading', { name: `Product ${ids.Teapot}`, level: 2 }));
  await page.getByRole('button', { name: 'Trash Product' }).click();
  await visible(page.getByRole('status').filter({ hasText: `Trashed Product ${ids.Teapot}.` }));
  await shot('trashed');
  await backToRecords('Product', "name = 'Teapot'");
  await visible(page.getByRole('cell', { name: 'No records match.' }));
  await page.getByLabel('Include trashed').check();
  await page.getByRole('button', { name: 'Apply filter' }).click();
  await visible(page.getByRole('columnheader', { name: 'trashed' }));
  await page.getByRole('link', { name: ids.Teapot }).click();
  await page.getByRole('button', { name: 'Untrash Product' }).click();
  await visible(page.getByRole('status').filter({ hasText: `Restored Product ${ids.Teapot}.` }));
  await visible(page.getByRole('button', { name: 'Trash Product' }));
  await shot('untrashed');

  // Delete it: the shelf's list refers to it, so the server refuses, in
  // its words, and the console offers clearArrayReferences.
  await page.getByRole('button', { name: 'Delete Product' }).click();
  await visible(page.getByRole('alert').filter({ hasText: 'REFERENCED' }));
  await shot('delete-refused');
  await page.getByRole('button', { name: 'Delete and clear list references' }).click();
  await visible(page.getByRole('status').filter({ hasText: `Deleted Product ${ids.Teapot}.` }));
  const after = await graphqlCall(token, '{ get(type: Shelf, id: "front") { ... on Shelf { products { core { id } } } } }');
  expect(after.data.get.products.length === 0, 'the shelf still lists the deleted product');
  await shot('deleted');
}

// ---- 4c. An instance: settings, token rotation, forced release change, deletion ----

// instanceSteps changes shop.local's settings (env values never shown),
// rotates its token (the old one is refused after), forces a breaking
// release change, and deletes a second instance behind its typed
// confirmation. It answers shop.local's new token.
async function instanceSteps(oldToken) {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Instances' }).click();
  await visible(page.getByRole('heading', { name: 'Instances', level: 1 }));
  await page.getByRole('button', { name: 'Manage shop.local' }).click();
  const settings = await visible(page.getByRole('form', { name: 'Settings of shop.local' }));
  await checkNamed('an instance\'s settings');
  await fitsPhone('settings-phone');
  await settings.getByLabel('Anonymous requests').check();
  await settings.getByLabel('username', { exact: true }).check();
  await settings.getByLabel('CORS origins').fill('https://shop.example.com');
  await settings.getByLabel('Env name').fill('PAYMENT_KEY');
  await settings.getByLabel('Env value').fill('very-secret-value');
  await settings.getByRole('button', { name: 'Add env' }).click();
  await visible(settings.getByRole('button', { name: 'Remove env PAYMENT_KEY' }));
  await settings.getByRole('button', { name: 'Save settings' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'Saved the settings of shop.local.' }));
  expect(!(await page.content()).includes('very-secret-value'), 'an env value is in the page');
  const inst = await adminCall('GET', '/instances/shop.local');
  expect(inst.anonymousRequests === true && inst.cors.allowedOrigins[0] === 'https://shop.example.com'
    && inst.env.PAYMENT_KEY === 'very-secret-value' && JSON.stringify(inst.accountFields) === '["username"]',
  `the settings were not saved: ${JSON.stringify(inst)}`);
  await shot('settings-saved');

  // Rotate the token: shown once, with a copy button; the old one stops.
  await page.getByRole('button', { name: 'Rotate token of shop.local' }).click();
  const newToken = await (await visible(page.getByRole('region', { name: 'New token of shop.local' })
    .getByLabel('Instance token of shop.local'))).inputValue();
  await visible(page.getByRole('region', { name: 'New token of shop.local' }).getByRole('button', { name: 'Copy token' }));
  expect(newToken && newToken !== oldToken, 'no new token shown');
  const refused = await graphqlCall(oldToken, '{ __typename }', false);
  expect(refused.errors && refused.errors[0].extensions.code === 'UNAUTHENTICATED', 'the old token still works');
  await shot('token-rotated');

  // A release the server calls breaking (stock holds numbers; v4 makes
  // it a String): refused in its words, then changed with force.
  await adminCall('PUT', '/apps/shop/releases/v4', { schema: 'type Product {\n  name: String\n  price: Float\n  stock: String\n  sku: String\n}\n\ntype Shelf {\n  name: String\n  featured: Product\n  products: [Product!]\n}\n' });
  await page.reload();
  await visible(page.getByRole('heading', { name: 'Instances', level: 1 }));
  await page.getByLabel('Release of shop.local', { exact: true }).selectOption('v4');
  await page.getByRole('button', { name: 'Change release of shop.local' }).click();
  await visible(page.getByRole('alert').filter({ hasText: 'BREAKING_CHANGE' }));
  await visible(page.getByRole('listitem').filter({ hasText: 'Product.stock: type Int → String' }));
  await shot('release-refused');
  await page.getByRole('button', { name: 'Change shop.local to v4 anyway' }).click();
  await visible(page.getByRole('status').filter({ hasText: 'shop.local now runs shop/v4.' }));

  // Delete a second instance: the button waits for its domain, typed.
  await adminCall('POST', '/instances', { domain: 'scratch.local', app: 'shop', release: 'v1' });
  await page.reload();
  await page.getByRole('button', { name: 'Manage scratch.local' }).click();
  const del = page.getByRole('button', { name: 'Delete scratch.local' });
  expect(await del.isDisabled(), 'Delete is enabled before the confirmation');
  await page.getByLabel('Type scratch.local to confirm').fill('scratch.loca');
  expect(await del.isDisabled(), 'Delete is enabled by a wrong confirmation');
  await page.getByLabel('Type scratch.local to confirm').fill('scratch.local');
  await shot('delete-confirmed');
  await del.click();
  await visible(page.getByRole('status').filter({ hasText: 'Deleted scratch.local.' }));
  await page.getByRole('rowheader', { name: 'scratch.local' }).waitFor({ state: 'detached' });
  await visible(page.getByRole('rowheader', { name: 'shop.local' }));
  await shot('instance-deleted');
  return newToken;
}

// backToRecords goes from a record back to its type's table and applies
// a filter there.
async function backToRecords(type, arcql) {
  await page.getByRole('link', { name: `← ${type} records` }).click();
  await page.getByLabel('ArcQL filter').fill(arcql);
  await page.getByRole('button', { name: 'Apply filter' }).click();
}

// fitsPhone checks the page at 390×844 does not scroll sideways, keeps a
// screenshot, and goes back to 1280×800.
async function fitsPhone(name) {
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow <= 0, `${name}: the page scrolls sideways at 390 px (by ${overflow} px)`);
  await shot(name);
  await page.setViewportSize({ width: 1280, height: 800 });
}

// adminCall and graphqlCall set the scene through the APIs, as any
// client would; adminCall fails on an error answer, graphqlCall too
// unless told not to.
async function adminCall(method, p, body) {
  const res = await fetch(base + '/admin/v1' + p, {
    method, headers: { authorization: adminToken, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = await res.json();
  expect(res.ok, `${method} ${p} answered ${res.status}: ${JSON.stringify(out)}`);
  return out;
}

function graphqlCall(token, query, mustSucceed = true) {
  return instanceCall('shop.local', token, query, {}, mustSucceed);
}

// ---- The GraphQL playground, functions and webhooks ----

// instanceCall runs a GraphQL document on an instance, as any client
// would; it fails on an error answer unless told not to.
async function instanceCall(domain, token, query, variables = {}, mustSucceed = true) {
  const res = await fetch(base + '/graphql', {
    method: 'POST', headers: { 'content-type': 'application/json', 'core-domain': domain, authorization: token },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (mustSucceed) expect(res.ok && !body.errors, `${query} answered ${res.status}: ${JSON.stringify(body)}`);
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
  // The teapot is gone (dataRecordSteps deleted it): the query asks for a seeded product.
  const seed = (await graphqlCall(shopToken, `{ find(type: Product, arcql: "name = 'Seed 1'") { edges { node { ... on Product { price } } } } }`)).data.find.edges[0].node;
  await editor.fill('{\n  find(type: Product, arcql: "name = \'Seed 1\'") {\n    edges { node { ... on Product { sku ');
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
  await visible(response.filter({ hasText: '"name": "Seed 1"' }));
  expect((await response.innerText()).includes(`"price": ${JSON.stringify(seed.price)}`), `the response lacks Seed 1's price ${seed.price}`);
  await visible(page.getByRole('status').filter({ hasText: '200 OK' }));
  // Completion knows arguments and type conditions too (the module, in
  // this page, on the instance's own introspection).
  const suggested = await page.evaluate(async () => {
    const c = await import('./completion.js');
    const res = await fetch('../graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'core-domain': 'shop.local',
      authorization: JSON.parse(sessionStorage.getItem('core.console.adminSessions'))['shop.local'].token }, body: JSON.stringify({ query: c.INTROSPECT }) });
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

// ---- Data with the admin token alone ----

// adminTokenOnlySteps builds a small task board (alice's Board and Task,
// a grant of it to bob) through the instance's API as an app would, then,
// in the console signed in with the admin token only: the Task table
// starts with its fields, shows the owner's username and the board's
// title; a Task is created and one edited (its assignee set to bob, shown
// as "bob"); alice's Task shows its owner and grants (kept as
// screenshots); a grant is created with selects and then covers it. The
// tab never holds an instance token: it holds the instance's 15-minute
// admin session, renewed near its end and when the server refuses it.
// oldToken is another instance's token, which must not be in the tab.
async function adminTokenOnlySteps(oldToken) {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const sdl = 'type Board {\n  title: String\n}\n\ntype Task {\n  title: String\n  board: Board\n  assignee: Account\n}\n';
  await adminCall('PUT', '/apps/board/releases/v1', { schema: sdl });
  const created = await adminCall('POST', '/instances', { domain: 'board.local', app: 'board', release: 'v1' });
  const appToken = created.token; // the app's, for the set-up below; the console never sees it
  const call = (token, query, variables) => instanceCall('board.local', token, query, variables);
  const account = async (username) => {
    const d = await call(appToken, 'mutation($v: AccountInput!) { createAccount(value: $v) { id } }',
      { v: { username, password: { value: 'correct horse battery' } } });
    const l = await call('', 'query($u: String!) { login(username: $u, password: "correct horse battery") { sessionToken } }', { u: username });
    return { id: d.data.createAccount.id, session: l.data.login.sessionToken };
  };
  const alice = await account('alice');
  const bob = await account('bob');
  const upsert = async (token, v) => (await call(token, 'mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }', { v })).data.upsert[0].id;
  const boardID = await upsert(alice.session, { Board: [{ title: 'Launch' }] });
  const taskID = await upsert(alice.session, { Task: [{ title: 'Write the docs', board: { core: { id: boardID } } }] });
  const grantID = await upsert(alice.session, { AccessRight: [{ resource: taskID, resourceType: 'Task', operationType: 'Query', operation: 'get',
    permissionType: 'RBP', members: [{ core: { id: bob.id } }] }] });

  // The table: fields first, the owner by username, the board by title.
  await page.goto(base + '/console/#/data/board.local/Task');
  await page.reload();
  const row = page.locator('tbody tr').filter({ hasText: 'Write the docs' });
  await visible(row);
  expect(await page.getByLabel('Instance token').count() === 0, 'the data browser asks for an instance token');
  const heads = (await page.locator('table thead th').allInnerTexts()).map((t) => t.trim());
  expect(heads[0] === 'title' && heads.includes('owner') && heads[heads.length - 1] === 'core.id',
    `the table's columns are ${JSON.stringify(heads)}, want the fields first, then owner…, core.id last`);
  await visible(row.getByRole('link', { name: 'alice', exact: true }));
  await visible(row.getByRole('link', { name: 'Launch', exact: true }));
  expect(await row.getByRole('link', { name: 'Launch', exact: true }).getAttribute('href') === `#/data/board.local/Board/${boardID}`, 'the board label does not link to the board');

  // Create a Task in the console.
  await page.getByLabel('title (String)').fill('Review');
  await page.getByLabel('board (Board id)').fill(boardID);
  await page.getByRole('button', { name: 'Create Task' }).click();
  await visible(page.getByRole('status').filter({ hasText: /^Created Task / }));
  await visible(page.locator('tbody tr').filter({ hasText: 'Review' }).getByRole('link', { name: 'Launch', exact: true }));
  await shot('admin-only-tasks');

  // alice's Task: its owner and the grant to bob; set its assignee.
  await row.getByRole('link', { name: taskID }).click();
  await visible(page.getByRole('heading', { name: `Task ${taskID}`, level: 2 }));
  const access = page.getByRole('region', { name: `Access to Task ${taskID}` });
  await visible(access.getByRole('heading', { name: 'Who may see it' }));
  await visible(access.getByText('Owner: alice'));
  const grantRow = access.getByRole('row').filter({ has: page.getByRole('rowheader', { name: grantID }) });
  await visible(grantRow.getByRole('link', { name: 'bob', exact: true }));
  await visible(grantRow.getByRole('cell', { name: 'Query.get', exact: true }));
  expect(await access.getByRole('heading', { name: /@access/ }).count() === 0, 'rules are shown for a type that has none');
  await page.getByLabel('assignee (Account id)').fill(bob.id);
  await page.getByRole('button', { name: 'Save Task' }).click();
  await visible(page.getByRole('status').filter({ hasText: `Saved Task ${taskID}.` }));
  await shot('record-owner-grants');

  // A grant made with selects: every Task to bob (SBP).
  await page.goto(base + '/console/#/data/board.local/AccessRight');
  await visible(page.getByRole('heading', { name: 'AccessRight', level: 2 }));
  const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Create AccessRight' }) });
  for (const name of ['resourceType (String)', 'operationType (String)', 'operation (String)', 'permissionType (AccessRightType)']) {
    expect(await form.getByLabel(name).evaluate((el) => el.tagName) === 'SELECT', `${name} is not a select`);
  }
  const typeOptions = await form.getByLabel('resourceType (String)').locator('option').allInnerTexts();
  expect(typeOptions.includes('Task') && typeOptions.includes('Board') && typeOptions.includes('*'), `resourceType offers ${typeOptions}`);
  await form.getByLabel('resource (String)').fill('*');
  await form.getByLabel('resourceType (String)').selectOption('Task');
  await form.getByLabel('operationType (String)').selectOption('Query');
  await form.getByLabel('operation (String)').selectOption('find');
  await form.getByLabel('permissionType (AccessRightType)').selectOption('SBP');
  await form.getByLabel('Add a Account id to members').fill(bob.id);
  await form.getByRole('button', { name: 'Add to members' }).click();
  await shot('grant-form');
  await form.getByRole('button', { name: 'Create AccessRight' }).click();
  await visible(page.getByRole('status').filter({ hasText: /^Created AccessRight / }));
  const sbp = await call(bob.session, '{ find(type: Task, arcql: "*") { edges { node { ... on Task { title } } } } }');
  expect(sbp.data.find.edges.length === 2, `with the console's grant bob finds ${JSON.stringify(sbp.data)}`);

  // The Task now lists both grants, and its assignee as bob.
  await page.goto(base + `/console/#/data/board.local/Task/${taskID}`);
  await page.reload();
  const again = page.getByRole('region', { name: `Access to Task ${taskID}` });
  await visible(again.getByRole('cell', { name: 'Query.find', exact: true }));
  await visible(again.getByRole('cell', { name: 'every Task', exact: true }));
  await visible(page.getByRole('link', { name: `Open Account ${bob.id}` }));
  await shot('record-owner-two-grants');
  await page.goto(base + '/console/#/data/board.local/Task');
  await visible(page.locator('tbody tr').filter({ hasText: 'Write the docs' }).getByRole('link', { name: 'bob', exact: true }));

  // The rules of a type, read from SDL by the console's parser (model.js).
  const rules = await page.evaluate(async () => {
    const m = await import('./model.js');
    const sdl = '# type Task @access(read: "a comment")\n"""A task, @access(read: "a description")"""\n'
      + 'type Task @indices(sets: [["title"]]) @access(read: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller",\n'
      + '  create: "board.core.createdBy = $caller", update: """core.createdBy = $caller""", delete: "title = \\"x, y\\"") {\n  title: String\n}\n'
      + 'type Board { title: String }\n';
    return [m.accessRules(sdl, 'Task'), m.accessRules(sdl, 'Board'), m.accessRules(sdl, 'Nope')];
  });
  const wantRules = [{ read: 'board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller', create: 'board.core.createdBy = $caller',
    update: 'core.createdBy = $caller', delete: 'title = "x, y"' }, null, null];
  expect(JSON.stringify(rules) === JSON.stringify(wantRules), `accessRules answered ${JSON.stringify(rules)}`);

  // The tab holds no instance token, only admin sessions of 15 minutes.
  const stored = await page.evaluate(() => Object.fromEntries(Object.keys(sessionStorage).map((k) => [k, sessionStorage.getItem(k)])));
  const all = JSON.stringify(stored);
  expect(!all.includes(appToken) && !all.includes(oldToken), 'an instance token is in sessionStorage');
  const sessions = JSON.parse(stored['core.console.adminSessions']);
  const left = Date.parse(sessions['board.local'].expires) - Date.now();
  expect(left > 10 * 60 * 1000 && left <= 15 * 60 * 1000, `the admin session ends in ${left} ms, want about 15 minutes`);

  // Near its end, the session is replaced before the next call.
  const first = sessions['board.local'].token;
  await page.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('core.console.adminSessions'));
    s['board.local'].expires = new Date(Date.now() + 60 * 1000).toISOString();
    sessionStorage.setItem('core.console.adminSessions', JSON.stringify(s));
  });
  await page.reload();
  await visible(page.locator('tbody tr').filter({ hasText: 'Write the docs' }));
  const renewed = await page.evaluate(() => JSON.parse(sessionStorage.getItem('core.console.adminSessions'))['board.local'].token);
  expect(renewed && renewed !== first, 'the session was not renewed near its end');
  // One the server refuses is replaced too.
  await page.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('core.console.adminSessions'));
    s['board.local'].token = 'cs2.none.e30.AAAA';
    sessionStorage.setItem('core.console.adminSessions', JSON.stringify(s));
  });
  await page.reload();
  await visible(page.locator('tbody tr').filter({ hasText: 'Write the docs' }));
  const replaced = await page.evaluate(() => JSON.parse(sessionStorage.getItem('core.console.adminSessions'))['board.local'].token);
  expect(replaced.startsWith('cs2.') && replaced !== 'cs2.none.e30.AAAA', 'a refused session was not replaced');
  // Admin sessions are the instance's alone.
  const other = await instanceCall('shop.local', replaced, '{ __typename }', {}, false);
  expect(other.errors && other.errors[0].extensions.code === 'UNAUTHENTICATED', `board.local's session on shop.local: ${JSON.stringify(other)}`);
}
