// Hostile values in the console: run by console/hostile_values_e2e_test.go
// against a real server whose instance holds Note records made of
// hostile values (markup, javascript: URLs, entities, Unicode, a long
// value; hostile ids too) and a function log of hostile lines. node
// hostile.mjs, with CORE_URL, CORE_ADMIN_TOKEN, CORE_DOMAIN,
// CORE_INSTANCE_TOKEN, CORE_EXPECTED (a JSON file: {notes, logged}) and
// CHROMIUM.
//
// The operator browses the records table, opens each record (its page
// and its form) and reads the function log. Every value must show as
// its exact text; after each view the page is searched for anything a
// value could have become (an element the console does not make, an on*
// attribute, a link off the console's routes, a payload's mark), and
// every request and browser error is watched. It waits for elements and
// text, never for a fixed time, and prints "ok" at the end.
import { finish, launch, need, signIn } from './browser.mjs';
import { readFileSync } from 'node:fs';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const domain = need('CORE_DOMAIN');
const instanceToken = need('CORE_INSTANCE_TOKEN');
const { notes, logged } = JSON.parse(readFileSync(need('CORE_EXPECTED'), 'utf8'));

const failures = [];
function expect(cond, message) { if (!cond) failures.push(message); }
// short shows a value in a message: long ones cut.
const short = (s) => JSON.stringify(s.length > 80 ? s.slice(0, 80) + '…' : s);

// The elements the console itself makes (console/web): a value that
// became markup would add another.
const CONSOLE_TAGS = ['a', 'button', 'caption', 'code', 'datalist', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'form',
  'h1', 'h2', 'h3', 'h4', 'header', 'input', 'label', 'legend', 'li', 'main', 'nav', 'noscript', 'ol', 'option', 'p', 'pre',
  'section', 'select', 'small', 'span', 'summary', 'table', 'tbody', 'td', 'textarea', 'th', 'thead', 'tr', 'ul'];

const browser = await launch();

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const tab = await context.newPage();
  tab.setDefaultTimeout(15000);
  tab.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  // A refused inline script or handler (the CSP) is reported as a console
  // error; so is anything else that went wrong. Only the browser's own
  // line for a 4xx the console asked for is allowed.
  tab.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) failures.push(`console error: ${m.text()}`);
  });
  tab.on('dialog', (d) => { failures.push(`a dialog opened: ${d.message()}`); d.dismiss().catch(() => {}); });
  // The console asks for its own files and the APIs, nothing else: an
  // <img src=x> made of a value would ask for /console/x.
  tab.on('request', (r) => {
    const u = r.url();
    if (u.startsWith('data:')) return;
    const path = u.startsWith(base) ? new URL(u).pathname : null;
    const ok = path !== null && (path === '/console/' || /^\/console\/[a-z]+\.(js|css)$/.test(path) ||
      path.startsWith('/admin/v1/') || path === '/graphql');
    if (!ok) failures.push(`a request the console does not make: ${r.method()} ${u}`);
  });

  // inert searches the page for anything a value could have become.
  async function inert(where) {
    const found = await tab.evaluate(({ tags, console }) => {
      const bad = [];
      for (const el of document.body.querySelectorAll('*')) {
        const tag = el.localName;
        if (!tags.includes(tag)) bad.push(`a <${tag}> element`);
        for (const a of el.attributes) {
          if (/^on/i.test(a.name)) bad.push(`an ${a.name} attribute on <${tag}>`);
          if (['src', 'srcdoc', 'action', 'formaction', 'style'].includes(a.name)) bad.push(`a ${a.name} attribute on <${tag}>`);
        }
        if (tag === 'a' && el.hasAttribute('href') && !el.href.startsWith(console)) bad.push(`a link to ${el.href.slice(0, 100)}`);
      }
      if (window.__pwned !== undefined) bad.push(`a payload ran (${JSON.stringify(window.__pwned)})`);
      return bad;
    }, { tags: CONSOLE_TAGS, console: base + '/console/' });
    const counts = new Map();
    for (const f of found) counts.set(f, (counts.get(f) || 0) + 1);
    for (const [f, n] of counts) failures.push(`${where}: ${f}${n > 1 ? ` (${n} times)` : ''}`);
  }

  await signIn(tab, base, adminToken);

  // 1. The records table, all on one page.
  const enc = encodeURIComponent;
  await tab.goto(`${base}/console/#/data/${enc(domain)}/Note`);
  // The first page (10 records) holds them all.
  if (notes.length > 10) throw new Error(`${notes.length} notes do not fit the table's first page`);
  const listed = () => tab.waitForFunction((n) => document.querySelector('[aria-busy]') === null &&
    document.querySelectorAll('table tbody tr').length === n, notes.length);
  await tab.getByRole('table', { name: 'Note records' }).waitFor();
  await listed();
  const table = await tab.evaluate(() => {
    const heads = [...document.querySelectorAll('table thead th')].map((th) => th.textContent.replace(/ [▲▼]$/, ''));
    return [...document.querySelectorAll('table tbody tr')].map((tr) => {
      const row = {};
      [...tr.children].forEach((cell, i) => {
        const a = cell.querySelector('a');
        row[heads[i]] = { text: cell.textContent, href: a ? a.getAttribute('href') : null };
      });
      return row;
    });
  });
  const route = (id) => `#/data/${enc(domain)}/Note/${enc(id)}`;
  for (const n of notes) {
    const row = table.find((r) => r['core.id'] && r['core.id'].text === n.id);
    if (!row) { failures.push(`the table has no row for id ${short(n.id)}`); continue; }
    expect(row['core.id'].href === route(n.id), `id ${short(n.id)} links to ${row['core.id'].href}`);
    expect(row.title.text === n.title, `the title of ${short(n.id)} shows as ${short(row.title.text)}, want ${short(n.title)}`);
    expect(row.link.text === n.link && row.link.href === null, `the link of ${short(n.id)} shows as ${short(row.link.text)} (href ${row.link.href}), want the text ${short(n.link)}`);
    expect(row.tags.text === n.tags.join(', '), `the tags of ${short(n.id)} show as ${short(row.tags.text)}`);
    expect(row.data.text === JSON.stringify(n.data), `the data of ${short(n.id)} shows as ${short(row.data.text)}`);
    // A reference shows the referenced Note's title (its label), else its id.
    const target = n.ref && notes.find((x) => x.id === n.ref);
    const ref = n.ref ? { text: (target && target.title) || n.ref, href: route(n.ref) } : { text: '—', href: null };
    expect(row.ref.text === ref.text && row.ref.href === ref.href, `the ref of ${short(n.id)} shows as ${short(row.ref.text)} → ${row.ref.href}, want ${short(ref.text)} → ${ref.href}`);
  }
  await inert('the records table');
  console.log(`records table: ${table.length} rows, every value shown as its text`);

  // 2. Each record, opened from its row: heading, facts and form.
  for (const n of notes) {
    await tab.goto(`${base}/console/#/data/${enc(domain)}/Note`);
    await listed();
    const link = await tab.evaluateHandle((id) => [...document.querySelectorAll('table tbody th a')].find((a) => a.textContent === id), n.id);
    if (!link.asElement()) { failures.push(`no link opens ${short(n.id)}`); continue; }
    await link.asElement().click();
    await tab.waitForFunction((want) => [...document.querySelectorAll('h2')].some((h) => h.textContent === want) &&
      document.querySelector('input[name="title"]') !== null, `Note ${n.id}`);
    const seen = await tab.evaluate(() => ({
      id: document.querySelector('dl.facts dd').textContent,
      title: document.querySelector('input[name="title"]').value,
      link: document.querySelector('input[name="link"]').value,
      tags: document.querySelector('textarea[name="tags"]').value,
      ref: document.querySelector('input[name="ref"]').value,
      missing: [...document.querySelectorAll('p')].some((p) => p.textContent.startsWith('There is no')),
    }));
    expect(!seen.missing, `record ${short(n.id)} was not found by its own id`);
    expect(seen.id === n.id, `record ${short(n.id)} opened as ${short(seen.id)}`);
    expect(seen.title === n.title, `the title field of ${short(n.id)} holds ${short(seen.title)}`);
    expect(seen.link === n.link, `the link field of ${short(n.id)} holds ${short(seen.link)}`);
    expect(seen.tags === n.tags.join('\n'), `the tags field of ${short(n.id)} holds ${short(seen.tags)}`);
    expect(seen.ref === (n.ref || ''), `the ref field of ${short(n.id)} holds ${short(seen.ref)}`);
    await inert(`record ${short(n.id)}`);
  }
  console.log(`records: ${notes.length} opened, each as itself, its values in its fields as text`);

  // 3. The function log: each line as its text.
  await tab.goto(`${base}/console/#/hooks/${enc(domain)}`);
  await tab.waitForFunction((n) => document.querySelectorAll('table.log pre.message').length >= n, logged.length);
  const messages = await tab.evaluate(() => [...document.querySelectorAll('table.log pre.message')].map((p) => p.textContent));
  for (const l of logged) expect(messages.includes(l), `the function log does not show ${short(l)} as text`);
  await inert('the function log');
  console.log(`function log: ${messages.length} lines, every hostile line shown as its text`);
} catch (e) {
  failures.push(`${e.message}`);
} finally {
  await browser.close();
}

finish(failures);
