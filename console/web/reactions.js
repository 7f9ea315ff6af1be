// An instance's reactions (#/reactions/{domain}): its event hooks through
// the admin API (never a secret), each with its delivery counts, its
// delivery log and a "send test event" that posts a signed test event now
// and shows how it went; and its scheduled functions, read through
// /graphql with the instance's admin session, each with its last and
// next run.
import { admin, describe, graphql, instanceAuth } from './api.js';
import { alert, h, replace, report, status } from './dom.js';

const enc = encodeURIComponent;

// reactionsLink is the control of the views that show an instance.
export function reactionsLink(domain) {
  return h('a', { href: `#/reactions/${enc(domain)}`, 'aria-label': `Reactions of ${domain}` }, 'Reactions');
}

function when(t) { return t ? new Date(t).toLocaleString() : '—'; }

export async function reactionsView(main, domain, heading) {
  heading(`Reactions of ${domain}`);
  const hooks = h('section', { class: 'card', 'aria-labelledby': 'eventhooks-title' });
  const schedules = h('section', { class: 'card', 'aria-labelledby': 'schedules-title' });
  main.append(h('p', {}, h('a', { href: '#/instances' }, '← Instances')), hooks, schedules);
  eventHooks(hooks, domain);
  scheduled(schedules, domain);
}

// eventHooks lists the hooks with their delivery log and a test button.
function eventHooks(el, domain) {
  const err = alert();
  const msg = status();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replace(el, h('h2', { id: 'eventhooks-title' }, 'Event hooks'),
    h('p', {}, 'EventHook records post the instance\'s changes, signed per Standard Webhooks. Create them with the instance token (docs: reactions).'),
    err, msg, list);

  async function load() {
    const r = await admin('GET', `/instances/${enc(domain)}/hooks`);
    list.removeAttribute('aria-busy');
    if (!r.ok) { replace(list); report(err, describe(r), true); return; }
    if (r.body.hooks.length === 0) { replace(list, h('p', {}, 'No event hooks.')); return; }
    replace(list, ...r.body.hooks.map(hook));
  }

  function hook(k) {
    const st = k.state || { delivered: 0, failed: 0, log: [] };
    const test = h('button', { type: 'button', 'aria-label': `Send test event to ${k.url}`, onclick: async () => {
      report(msg, ''); report(err, '');
      test.disabled = true;
      const r = await admin('POST', `/instances/${enc(domain)}/hooks/${enc(k.id)}/test`);
      test.disabled = false;
      if (!r.ok) { report(err, describe(r), true); return; }
      const a = r.body;
      if (a.error) report(err, `Test event ${a.eventId} to ${k.url} failed: ${a.error} (status ${a.status}).`, true);
      else report(msg, `Test event ${a.eventId} delivered to ${k.url}: status ${a.status} in ${a.durationMs} ms.`);
    } }, 'Send test event');
    const log = [...(st.log || [])].reverse();
    return h('article', { 'aria-label': `Event hook ${k.url}` },
      h('h3', { class: 'code break' }, k.url),
      h('p', {}, `${k.enabled ? 'Enabled' : 'Disabled'} · types: ${(k.types || []).join(', ') || 'all'} · operations: ${(k.operations || []).join(', ') || 'all'}`
        + (k.arcql ? ` · filter: ${k.arcql}` : '') + ` · delivered ${st.delivered}, failed ${st.failed}`),
      k.lastError || st.lastError ? h('p', { class: 'muted' }, `Last error: ${k.lastError || st.lastError}`) : '',
      test,
      log.length === 0 ? h('p', {}, 'Nothing delivered yet.') : h('div', { class: 'scroll' }, h('table', { class: 'log' },
        h('caption', {}, `Delivery log of ${k.url}, newest first`),
        h('thead', {}, h('tr', {}, ['Time', 'Event', 'Attempt', 'Status', 'Duration', 'Result'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, log.map((a) => h('tr', {},
          h('td', { class: 'nowrap', title: a.at }, when(a.at)),
          h('td', { class: 'code' }, `${a.type || ''} ${a.op || ''} ${a.id || ''}`),
          h('td', {}, String(a.attempt)),
          h('td', {}, String(a.status)),
          h('td', {}, `${a.durationMs} ms`),
          h('td', {}, a.error ? `failed: ${a.error}` : 'delivered', a.response ? h('pre', { class: 'message' }, a.response) : '')))))));
  }
  load();
}

const SCHEDULES = `query CoreConsoleSchedules {
  find(type: ScheduledFunction, arcql: "*", first: 100) {
    edges { node { ... on ScheduledFunction { fn { type field } interval intervalFrequency repeats
      lastExecuted lastExecutionSucceeded lastExecutionError nextExecution core { id } } } }
  }
}`;

// scheduled lists the ScheduledFunction records, read with the
// instance's admin session (the admin token alone reaches them).
function scheduled(el, domain) {
  const err = alert();
  const list = h('div');
  const auth = instanceAuth(domain);
  replace(el, h('h2', { id: 'schedules-title' }, 'Scheduled functions'), err, list);

  async function load() {
    report(err, '');
    replace(list, h('div', { 'aria-busy': 'true' }, 'Loading…'));
    const r = await graphql(domain, auth, SCHEDULES);
    if (!r.ok) { replace(list); report(err, describe(r), true); return; }
    const rows = r.body.data.find.edges.map((e) => e.node);
    if (rows.length === 0) { replace(list, h('p', {}, 'No scheduled functions.')); return; }
    replace(list, h('div', { class: 'scroll' }, h('table', {},
      h('caption', {}, `Scheduled functions of ${domain}`),
      h('thead', {}, h('tr', {}, ['Function', 'Every', 'Last run', 'Outcome', 'Next run'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows.map((s) => h('tr', {},
        h('th', { scope: 'row', class: 'code' }, `${s.fn.type}.${s.fn.field}`),
        h('td', {}, s.repeats === false ? 'once' : `${s.intervalFrequency || 1} × ${s.interval || 'DAY'}`),
        h('td', { title: s.lastExecuted || '' }, when(s.lastExecuted)),
        h('td', {}, s.lastExecuted ? (s.lastExecutionSucceeded ? 'succeeded' : `failed: ${s.lastExecutionError || ''}`) : '—'),
        h('td', { title: s.nextExecution || '' }, s.nextExecution ? when(s.nextExecution) : 'none (over)')))))));
  }
  load();
}
