// Uploaded files cannot act as the service: run by
// console/files_e2e_test.go against a real server whose instance
// files.test allows pages of any origin (cors "*"). node files.mjs, with
// CORE_URL, CORE_ADMIN_TOKEN, CORE_TOKEN (the instance token) and
// CHROMIUM.
//
// A page on another origin (the channel, an HTTP server on loopback)
// uploads an HTML page and an SVG image with script through a real
// <input type=file> and fetch. The console's tab on the service's origin
// (holding the admin token) then opens each uploaded file: their script
// must not run there. The same HTML served from the channel's own origin
// is the control: there its script runs and reports, so that silence
// from the service's origin means the script was stopped. It waits for
// events, never for a fixed time, and prints "ok" at the end.
import { channel, launch, need, waitFor, signIn } from './browser.mjs';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const token = need('CORE_TOKEN');

let controlPage = '';
const formPage = `<!doctype html><title>Upload</title>
<input type="file" id="pick" multiple aria-label="Files">
<script>
document.getElementById('pick').addEventListener('change', async (ev) => {
  const form = new FormData();
  [...ev.target.files].forEach((f, i) => form.append(String(i), f, f.name));
  const res = await fetch(${JSON.stringify(base)} + '/upload/browser', {
    method: 'POST', headers: { 'core-domain': 'files.test', authorization: ${JSON.stringify(token)} }, body: form });
  window.uploaded = { status: res.status, body: await res.json() };
});
</script>`;
const ch = await channel((path) => ({ '/form.html': formPage, '/control.html': controlPage })[path]);
const { hits } = ch;
const channelServer = ch.server;
const channelURL = ch.url;
const serviceOrigin = new URL(base).origin;
const controlOrigin = ch.otherOrigin;

const failures = [];
function expect(cond, message) { if (!cond) failures.push(message); }

const script = `fetch(${JSON.stringify(channelURL)} + '/hit?kind=ran&from=' + encodeURIComponent(location.origin), { mode: 'no-cors' });
document.documentElement.dataset.ran = '1';`;
const html = `<!doctype html><title>Uploaded page</title><h1>Uploaded page</h1><script>${script}</script>`;
const svg = `<svg xmlns="http://www.w3.org/2000/svg" onload="${script.replace(/"/g, '&quot;')}"><script>${script}</script><text y="20">Uploaded SVG</text></svg>`;

const browser = await launch();
try {
  const context = await browser.newContext({ acceptDownloads: true });
  context.setDefaultTimeout(15000);

  // The operator's console tab holds the admin token.
  const tab = await context.newPage();
  await signIn(tab, base, adminToken);

  // A page of another origin uploads both files with a browser form.
  const form = await context.newPage();
  await form.goto(channelURL + '/form.html');
  await form.getByLabel('Files').setInputFiles([
    { name: 'page.html', mimeType: 'text/html', buffer: Buffer.from(html) },
    { name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(svg) },
  ]);
  await form.waitForFunction(() => window.uploaded);
  const uploaded = await form.evaluate(() => window.uploaded);
  expect(uploaded.status === 201 && uploaded.body.length === 2, `the browser upload answered ${JSON.stringify(uploaded)}`);
  await form.close();
  console.log(`browser upload: ${uploaded.status}, ${uploaded.body.map((r) => r.name + ' as ' + r.type).join(', ')}`);

  // The control: the same page on another origin runs its script.
  controlPage = html;
  const control = await context.newPage();
  await control.goto(controlOrigin + '/control.html');
  await waitFor(() => hits.some((h) => h.kind === 'ran' && h.from === controlOrigin), 'the control page to report');
  await control.close();

  // Each uploaded file opened in the console's tab, on the service's
  // origin: an HTML page is a download; the SVG is shown as text.
  for (const rec of uploaded.body) {
    const url = `${base}${rec.url.path}?token=${encodeURIComponent(token)}`;
    let how;
    const download = tab.waitForEvent('download').then((d) => { how = 'downloaded'; return d; }).catch(() => null);
    try {
      const res = await tab.goto(url);
      how = `shown: ${res.status()} ${res.headers()['content-type']}; ran: ${await tab.locator('html').getAttribute('data-ran')}`;
    } catch (e) {
      if (!/Download is starting/.test(e.message)) throw e;
      await download;
    }
    console.log(`${rec.name}: ${how}`);
    expect(!(await tab.locator('html').getAttribute('data-ran').catch(() => null)), `${rec.name} ran script on the service's origin`);
  }
  // The console's data browser: an uploaded image is shown, and a Note's
  // File field uploads from the record form.
  const dot = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
  await tab.goto(`${base}/console/#/data/files.test/Note`);
  await tab.getByLabel('Upload a file for attachment').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: dot });
  await waitFor(async () => (await tab.getByLabel('attachment (File id)').inputValue()) !== '', 'the upload to fill the File id');
  const fileID = await tab.getByLabel('attachment (File id)').inputValue();
  await tab.getByRole('button', { name: 'Create Note' }).click();
  await tab.getByText(/Created Note/).waitFor();
  await tab.goto(`${base}/console/#/data/files.test/File/${fileID}`);
  const img = tab.getByAltText('Preview of dot.png');
  await img.waitFor();
  await waitFor(() => img.evaluate((i) => i.complete && i.naturalWidth > 0), 'the preview to load');
  // The instance's session is sent in a header, never put in a URL.
  const src = await img.getAttribute('src');
  expect(src.startsWith('blob:') && !src.includes('token'), `the preview's address is ${src}, want a blob: URL`);
  expect(await tab.locator('a[href*="token="], img[src*="token="]').count() === 0, 'a link or image of the record carries a token in its URL');
  await tab.getByRole('link', { name: /Download dot\.png/ }).waitFor();
  console.log(`console: uploaded ${fileID} from a Note's form; its record shows the image and a download link`);

  // The instance's Files view lists every file: name, type, size, owner,
  // a thumbnail of an image and a download link that downloads it.
  await tab.goto(`${base}/console/#/data/files.test`);
  await tab.getByRole('link', { name: 'Files of files.test' }).click();
  await tab.getByRole('heading', { name: 'Files of files.test', level: 1 }).waitFor();
  const files = tab.getByRole('table', { name: 'Files of files.test' });
  await files.waitFor();
  const rows = files.locator('tbody tr');
  await waitFor(async () => (await rows.count()) === 3, 'the Files view to list the three uploads');
  const listed = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.cells].slice(1, 5).map((c) => c.textContent)));
  console.log(`files view: ${listed.map((r) => r.join(' | ')).join('; ')}`);
  const dotRow = listed.find((r) => r[0] === 'dot.png');
  expect(dotRow && dotRow[1] === 'image/png' && dotRow[2] === `${dot.length} B`, `the Files view's row of dot.png: ${JSON.stringify(dotRow)}`);
  expect(listed.some((r) => r[0] === 'page.html' && r[1] === 'text/html; charset=utf-8') && listed.some((r) => r[0] === 'logo.svg'),
    `the Files view lists the browser's uploads: ${JSON.stringify(listed)}`);
  expect(listed.every((r) => r[3] !== ''), `every file shows an owner: ${JSON.stringify(listed)}`);
  const thumb = tab.getByAltText('Thumbnail of dot.png');
  await waitFor(() => thumb.evaluate((i) => i.complete && i.naturalWidth > 0), 'the thumbnail to load');
  expect(await tab.getByAltText('Thumbnail of page.html').count() === 0, 'a page is shown a thumbnail');
  expect(await tab.locator('a[href*="token="], img[src*="token="]').count() === 0, 'a link or image of the Files view carries a token in its URL');
  const [saved] = await Promise.all([tab.waitForEvent('download'), tab.getByRole('link', { name: 'Download dot.png' }).click()]);
  const savedBytes = await new Promise((resolve, reject) => {
    saved.createReadStream().then((st) => { const parts = []; st.on('data', (c) => parts.push(c)); st.on('end', () => resolve(Buffer.concat(parts))); st.on('error', reject); }, reject);
  });
  expect(saved.suggestedFilename() === 'dot.png' && savedBytes.equals(dot), `the Files view's download: ${saved.suggestedFilename()}, ${savedBytes.length} bytes`);
  if (process.env.CORE_ARTIFACTS) await tab.screenshot({ path: `${process.env.CORE_ARTIFACTS}/files-view.png`, fullPage: true });
  console.log('files view: the thumbnail loads and the download link downloads dot.png');

  // A report would have come by now if any script ran: the control's came.
  await tab.goto(base + '/console/');
  await tab.getByRole('heading', { name: 'Apps and releases', level: 1 }).waitFor();
  expect(!hits.some((h) => h.from === serviceOrigin), `an uploaded file ran script on the service's origin: ${JSON.stringify(hits)}`);
  expect(await tab.evaluate(() => sessionStorage.getItem('core.console.adminToken')) === adminToken, 'the console lost its token');
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
