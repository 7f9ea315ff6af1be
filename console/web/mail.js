// An instance's mail (#/mail/{domain}), all through the admin API: its
// mail server (smtp, the password write-only: typed to change it, never
// shown), a test message, the templates of each message with a preview
// rendered by the server with sample values, and the outbox (status,
// attempts, last error; never a recipient or contents), read again while
// the view is open.
import { admin, describe } from './api.js';
import { alert, field, h, replace, report, status } from './dom.js';

const enc = encodeURIComponent;

// REFRESH is how often the outbox is read again while shown.
const REFRESH = 3000;

// MESSAGES are the messages the service sends, as mailTemplates names them.
const MESSAGES = [['passwordReset', 'Password reset code'], ['emailVerification', 'E-mail verification link'], ['test', 'Test message']];

// mailLink is the control of the views that show an instance.
export function mailLink(domain) {
  return h('a', { href: `#/mail/${enc(domain)}`, 'aria-label': `Mail of ${domain}` }, 'Mail');
}

export async function mailView(main, domain, heading) {
  heading(`Mail of ${domain}`);
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  main.append(h('p', {}, h('a', { href: '#/instances' }, '← Instances')), body);
  const r = await admin('GET', `/instances/${enc(domain)}`);
  body.removeAttribute('aria-busy');
  if (!r.ok) { replace(body, h('p', { class: 'alert error', role: 'alert' }, describe(r))); return; }
  const inst = r.body;
  const outbox = h('section', { class: 'card', 'aria-labelledby': 'outbox-title' });
  const refresh = outboxTable(outbox, domain);
  replace(body, smtpForm(inst, refresh), templatesForm(inst), outbox);
}

// smtpForm edits the smtp setting and sends a test message.
function smtpForm(inst, refreshOutbox) {
  const d = inst.domain;
  const s = inst.smtp || {};
  const host = h('input', { autocomplete: 'off', spellcheck: 'false', class: 'code', value: s.host || '' });
  const port = h('input', { type: 'number', min: 0, max: 65535, value: s.port || 0 });
  const tls = h('select', {}, [['starttls', 'STARTTLS (required)'], ['implicit', 'TLS from the start (465)'], ['none', 'None (trusted network only)']]
    .map(([v, t]) => h('option', { value: v, selected: (s.tls || 'starttls') === v }, t)));
  const username = h('input', { autocomplete: 'off', spellcheck: 'false', value: s.username || '' });
  const password = h('input', { type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  const from = h('input', { autocomplete: 'off', spellcheck: 'false', value: s.from || '', placeholder: 'Books <no-reply@example.com>' });
  const passwordHint = () => (inst.smtp && inst.smtp.passwordSet ? 'A password is kept (never shown): type one only to replace it.' : 'No password is kept.');
  const passwordField = field('SMTP password', password, passwordHint());
  const hint = passwordField.querySelector('small');
  const msg = status();
  const err = alert();
  const save = h('button', { type: 'submit' }, 'Save mail server');
  const form = h('form', { 'aria-label': `Mail server of ${d}`, onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    const smtp = { host: host.value.trim(), port: Number(port.value) || 0, tls: tls.value, username: username.value.trim(), from: from.value.trim() };
    if (password.value) smtp.password = password.value;
    save.disabled = true;
    const r = await admin('PATCH', `/instances/${enc(d)}`, { smtp });
    save.disabled = false;
    if (!r.ok) { report(err, 'Not saved: ' + describe(r), true); return; }
    Object.assign(inst, r.body);
    password.value = '';
    replace(hint, passwordHint());
    report(msg, `Saved the mail server of ${d}.`);
  } },
  h('h2', {}, 'Mail server'),
  h('div', { class: 'row' }, field('SMTP host', host), field('SMTP port', port, '0: 587, or 465 with TLS from the start.'), field('TLS', tls)),
  h('div', { class: 'row' }, field('SMTP username', username), passwordField),
  field('From', from, 'The sender of every message: an address, or Name <address>.'),
  save, msg, err);

  const to = h('input', { type: 'email', autocomplete: 'off', spellcheck: 'false' });
  const sent = status();
  const sendErr = alert();
  const send = h('button', { type: 'submit' }, 'Send test message');
  const test = h('form', { 'aria-label': `Test message of ${d}`, onsubmit: async (ev) => {
    ev.preventDefault();
    report(sent, ''); report(sendErr, '');
    send.disabled = true;
    const r = await admin('POST', `/instances/${enc(d)}/mail/test`, { to: to.value.trim() });
    send.disabled = false;
    if (!r.ok) { report(sendErr, 'Not sent: ' + describe(r), true); return; }
    report(sent, `Queued test message ${r.body.id}: the outbox below shows whether it went.`);
    refreshOutbox();
  } },
  h('h3', {}, 'Send a test message'),
  h('div', { class: 'inline' }, field('Send a test message to', to), send), sent, sendErr);
  return h('section', { class: 'card' }, form, test);
}

// templatesForm edits the instance's text of each message, previewed by
// the server (the same rendering as a sent message, with sample values).
function templatesForm(inst) {
  const d = inst.domain;
  const which = h('select', {}, MESSAGES.map(([v, t]) => h('option', { value: v }, t)));
  const subject = h('input', { autocomplete: 'off', spellcheck: 'false', class: 'code' });
  const text = h('textarea', { rows: 6, spellcheck: 'false', class: 'code' });
  const html = h('textarea', { rows: 6, spellcheck: 'false', class: 'code' });
  const fill = () => {
    const t = (inst.mailTemplates || {})[which.value] || {};
    subject.value = t.subject || ''; text.value = t.text || ''; html.value = t.html || '';
    replace(preview);
  };
  which.addEventListener('change', fill);
  const template = () => ({ subject: subject.value, text: text.value, html: html.value });
  const preview = h('div', { 'aria-live': 'polite' });
  const msg = status();
  const err = alert();
  const show = async () => {
    report(msg, ''); report(err, '');
    const r = await admin('POST', `/instances/${enc(d)}/mail/preview`, { name: which.value, template: template() });
    if (!r.ok) { replace(preview); report(err, 'No preview: ' + describe(r), true); return; }
    replace(preview, h('dl', { class: 'facts', 'aria-label': 'Preview' },
      h('dt', {}, 'Subject'), h('dd', {}, r.body.subject),
      h('dt', {}, 'Text'), h('dd', {}, h('pre', { class: 'message' }, r.body.text)),
      h('dt', {}, 'HTML (source)'), h('dd', {}, h('pre', { class: 'message' }, r.body.html))));
  };
  const save = h('button', { type: 'submit' }, 'Save template');
  const form = h('form', { 'aria-label': `Mail templates of ${d}`, onsubmit: async (ev) => {
    ev.preventDefault();
    report(msg, ''); report(err, '');
    save.disabled = true;
    const r = await admin('PATCH', `/instances/${enc(d)}`, { mailTemplates: { [which.value]: template() } });
    save.disabled = false;
    if (!r.ok) { report(err, 'Not saved: ' + describe(r), true); return; }
    Object.assign(inst, r.body);
    report(msg, `Saved the template of ${which.value}.`);
  } },
  h('h2', {}, 'Templates'),
  h('p', {}, 'Go templates over {{.App}}, {{.Domain}}, {{.Account}}, {{.Code}} (password reset), {{.Link}} (verification) and {{.Minutes}}. An empty part is the default\'s.'),
  field('Template of', which), field('Subject', subject), field('Text', text), field('HTML', html),
  h('div', { class: 'inline' }, h('button', { type: 'button', onclick: show }, 'Preview'), save), msg, err, preview);
  fill();
  return h('section', { class: 'card' }, form);
}

// outboxTable shows the outbox, read again every REFRESH ms while el is in
// the page; it returns a function that reads it at once.
function outboxTable(el, domain) {
  const updated = h('span', { class: 'muted' });
  const err = alert();
  const table = h('div', { class: 'scroll' }, h('p', { 'aria-busy': 'true' }, 'Loading…'));
  replace(el, h('h2', { id: 'outbox-title' }, 'Outbox'),
    h('p', {}, 'The messages of the last day, oldest first: never their recipient or contents.'),
    updated, err, table);
  let timer = 0;
  const stop = () => { clearTimeout(timer); timer = 0; };
  window.addEventListener('hashchange', stop, { once: true });
  let last = '';
  async function tick() {
    stop();
    const r = await admin('GET', `/instances/${enc(domain)}/outbox`);
    if (!el.isConnected) return;
    timer = setTimeout(tick, REFRESH);
    replace(updated, `Updated ${new Date().toLocaleTimeString()}; refreshed every ${REFRESH / 1000} s.`);
    if (!r.ok) { report(err, describe(r), true); return; }
    report(err, '');
    const ms = r.body.messages || [];
    const key = JSON.stringify(ms);
    if (key === last) return; // unchanged: leave the table (and a reader's place) alone
    last = key;
    if (ms.length === 0) { replace(table, h('p', {}, 'No messages.')); return; }
    const when = (t) => (t ? new Date(t).toLocaleString() : '—');
    replace(table, h('table', {},
      h('caption', { class: 'sr-only' }, `Outbox of ${domain}`),
      h('thead', {}, h('tr', {}, ['Message', 'Kind', 'Status', 'Attempts', 'Next attempt', 'Last error', 'Created', 'Sent'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, ms.map((m) => h('tr', {},
        h('th', { scope: 'row', class: 'code' }, m.id),
        h('td', {}, m.kind),
        h('td', { class: `mail-${m.status}` }, m.status),
        h('td', {}, String(m.attempts)),
        h('td', { class: 'nowrap' }, m.status === 'queued' ? when(m.nextAttempt) : '—'),
        h('td', {}, m.lastError ? h('pre', { class: 'message' }, m.lastError) : '—'),
        h('td', { class: 'nowrap' }, when(m.created)),
        h('td', { class: 'nowrap' }, when(m.sent)))))));
  }
  tick();
  return tick;
}
