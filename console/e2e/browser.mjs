// What the console's browser tests share: the settings they are given
// (environment variables) and the browser they drive.
import { chromium } from 'playwright-core';
import http from 'node:http';

// need returns the environment variable name, or ends the script saying
// it is not set.
export function need(name) {
  const v = process.env[name];
  if (!v) { console.error(`${name} is not set`); process.exit(2); }
  return v;
}

// launch starts Debian's chromium (CHROMIUM, else /usr/bin/chromium),
// headless. As root in a closed network: no sandbox, and no background
// connections that the network would refuse.
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

// signIn opens the console at base on page and signs in with the admin
// token, returning once the first view is shown.
export async function signIn(page, base, adminToken) {
  await page.goto(base + '/console/');
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Apps and releases', level: 1 }).waitFor();
}

// waitFor polls cond until it holds; the bound is for a broken run, not
// a timing assertion.
export async function waitFor(cond, what) {
  for (let i = 0; i < 300; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// channel starts the HTTP server on loopback that a test's pages report
// to: every GET /hit is kept in hits ({kind, value, from}); pages(path)
// answers the HTML served at a path, or undefined (404). It returns the
// hits, the channel's URL, the URL of its origin under another host name
// (localhost: cookies are kept per host, whatever the port) and the
// server.
export async function channel(pages) {
  const hits = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://channel');
    if (u.pathname === '/hit') {
      hits.push({ kind: u.searchParams.get('kind'), value: u.searchParams.get('value') || '', from: u.searchParams.get('from') || '' });
      res.writeHead(204, { 'access-control-allow-origin': '*' }).end();
      return;
    }
    const page = pages(u.pathname);
    if (page !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return { hits, url: `http://127.0.0.1:${port}`, otherOrigin: `http://localhost:${port}`, server };
}

// finish ends a script: its failures listed (exit 1), or "ok".
export function finish(failures) {
  if (failures.length > 0) {
    console.error('FAILURES:\n' + failures.map((f) => ' - ' + f).join('\n'));
    process.exit(1);
  }
  console.log('ok');
}
