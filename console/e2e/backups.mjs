// Backups and moving an instance in the console: run by
// console/backups_e2e_test.go against a real server that keeps backups
// (servertest.WithBackups) and has instance notes.test with records.
// node backups.mjs, with CORE_URL, CORE_ADMIN_TOKEN, CORE_ARTIFACTS and
// CHROMIUM.
//
// Takes a backup in the Backups view, sees it listed and downloads it (the
// bytes are a gzip'd tar whose first entry is manifest.json, a JSON
// object); exports notes.test from its Manage panel (the same kind of
// archive) and imports that file into a new instance, copy.test. It waits
// for elements and downloads, never for a fixed time, and prints "ok" at
// the end.
import { finish, launch, need, signIn } from './browser.mjs';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const artifacts = need('CORE_ARTIFACTS');
mkdirSync(artifacts, { recursive: true });

const failures = [];
function expect(cond, message) { if (!cond) failures.push(message); }

// firstEntry reads a .tar.gz's first entry: {name, body}.
function firstEntry(bytes) {
  expect(bytes[0] === 0x1f && bytes[1] === 0x8b, 'the download is not gzip');
  const tar = gunzipSync(bytes);
  const name = tar.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '');
  const size = parseInt(tar.subarray(124, 136).toString('latin1').replace(/\0.*$/s, '').trim(), 8);
  return { name, body: tar.subarray(512, 512 + size).toString('utf8') };
}

const browser = await launch();
let page;
let step = 0;
async function shot(name) {
  step += 1;
  await page.screenshot({ path: path.join(artifacts, `backups-${String(step).padStart(2, '0')}-${name}.png`), fullPage: true });
}
async function downloaded(click, wantName) {
  const [d] = await Promise.all([page.waitForEvent('download'), click()]);
  expect(wantName.test(d.suggestedFilename()), `the download is named ${d.suggestedFilename()}`);
  const file = await d.path();
  return readFileSync(file);
}
try {
  page = await (await browser.newContext({ acceptDownloads: true })).newPage();
  page.setDefaultTimeout(30000);
  await signIn(page, base, adminToken);

  // 1. Take a backup, see it listed, download it.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Backups' }).click();
  await page.getByRole('heading', { name: 'Backups', level: 1 }).waitFor();
  await page.getByText('No backups yet.').waitFor();
  await page.getByRole('button', { name: 'Take a backup now' }).click();
  const took = page.getByRole('status').filter({ hasText: /^Took / });
  await took.waitFor();
  const name = (await took.innerText()).match(/^Took (\S+) /)[1];
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
  await row.waitFor();
  const cells = await row.getByRole('cell').allInnerTexts();
  expect(/^\d+(\.\d)? (B|KiB|MiB)$/.test(cells[0]) && /^\d{4}-\d\d-\d\dT/.test(cells[1]), `the backup's row shows ${JSON.stringify(cells)}`);
  await shot('listed');
  const backup = await downloaded(() => row.getByRole('button', { name: `Download ${name}` }).click(), /\.tar\.gz$/);
  const first = firstEntry(backup);
  expect(first.name === 'manifest.json', `the backup's first entry is ${first.name}`);
  let manifest = null;
  try { manifest = JSON.parse(first.body); } catch (e) { failures.push(`the backup's manifest is not JSON: ${e.message}`); }
  expect(manifest && typeof manifest === 'object', 'the backup has no manifest object');
  expect(!JSON.stringify(manifest).includes(adminToken), 'the admin token is in the manifest');
  console.log(`backup ${name}: ${backup.length} bytes, first entry ${first.name}`);

  // 2. Export notes.test from its Manage panel.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Instances' }).click();
  await page.getByRole('button', { name: 'Manage notes.test' }).click();
  const exported = await downloaded(() => page.getByRole('button', { name: 'Export notes.test' }).click(), /^notes\.test\.tar\.gz$/);
  const exFirst = firstEntry(exported);
  expect(exFirst.name === 'manifest.json', `the export's first entry is ${exFirst.name}`);
  await shot('exported');

  // 3. Import it into a new instance.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Backups' }).click();
  await page.getByRole('heading', { name: 'Import into a new instance' }).waitFor();
  await page.getByLabel('Export file').setInputFiles({ name: 'notes.test.tar.gz', mimeType: 'application/gzip', buffer: exported });
  await page.getByLabel('New domain').fill('copy.test');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByRole('status').filter({ hasText: /^Imported \d+ records into copy\.test\.$/ }).waitFor(); // the notes and the admin account
  await page.getByLabel('Instance token of copy.test').waitFor();
  await shot('imported');
  // The copy's records, in its data browser (the admin token alone).
  await page.getByRole('link', { name: 'Browse data of copy.test' }).click();
  await page.getByRole('navigation', { name: 'Record types' }).getByRole('link', { name: 'Note', exact: true }).click();
  for (const t of ['first', 'second', 'third']) await page.getByRole('cell', { name: t, exact: true }).waitFor();
  await shot('copy-browsed');
  // A bad file is refused, naming the problem, and makes nothing.
  await page.goto(base + '/console/#/backups');
  await page.getByLabel('Export file').setInputFiles({ name: 'junk.tar.gz', mimeType: 'application/gzip', buffer: Buffer.from('not an export') });
  await page.getByLabel('New domain').fill('junk.test');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: /^Not imported: / }).waitFor();
  const list = await (await fetch(base + '/admin/v1/instances', { headers: { authorization: adminToken } })).json();
  expect(!list.instances.some((i) => i.domain === 'junk.test'), 'a refused import made an instance');
} catch (e) {
  if (page) await shot('failure').catch(() => {});
  failures.push(e.stack || String(e));
} finally {
  await browser.close();
}
finish(failures);
