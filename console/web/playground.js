// The GraphQL playground of one instance (#/graphql/{domain}): a query
// editor with schema-aware completion (completion.js), a docs pane, both
// from introspection; variables; headers pre-filled with the instance's
// domain; the token of the person's choice (the instance's admin session,
// an account's session token pasted or got by logging in, or none);
// Run (Ctrl+Enter) shows the response as it came. Requests go to /graphql
// as any client's would, under the instance's rules.
import { describe, graphql, instanceAuth, tokenOf } from './api.js';
import { alert, field, h, replace, report, status, uid } from './dom.js';
import { sdlEditor } from './editor.js';
import { INTROSPECT, complete, model, named, typeString } from './completion.js';
import { pretty, send } from './raw.js';

const EXAMPLE = `# Ctrl+Space completes; Ctrl+Enter runs.
query {
  find(type: , arcql: "*", first: 10) {
    edges { node { core { id created } } }
  }
}
`;

// drafts keeps each instance's document while the tab lives.
const drafts = new Map();

// playgroundLink is the "GraphQL" control of the views that show an
// instance.
export function playgroundLink(domain) {
  return h('a', { href: `#/graphql/${encodeURIComponent(domain)}`, 'aria-label': `GraphQL of ${domain}` }, 'GraphQL');
}

export function playgroundView(main, domain, heading) {
  heading(`GraphQL of ${domain}`);
  const editor = sdlEditor({ label: 'Query', value: drafts.get(domain) || EXAMPLE });
  editor.area.addEventListener('input', () => drafts.set(domain, editor.value));
  const variables = h('textarea', { class: 'code box', rows: 4, spellcheck: 'false', autocomplete: 'off' });
  variables.value = '{}';
  const headers = h('textarea', { class: 'code box', rows: 3, spellcheck: 'false', autocomplete: 'off' });
  headers.value = `core-domain: ${domain}\n`;
  const token = tokenChooser(domain, () => loadSchema());
  const run = h('button', { type: 'submit', 'aria-keyshortcuts': 'Control+Enter' }, 'Run');
  const meta = status();
  const err = alert();
  const output = h('pre', { class: 'response code', tabindex: '0', role: 'region', 'aria-label': 'Response' });
  const docs = h('section', { class: 'docs card', 'aria-label': 'Docs' }, h('h2', {}, 'Docs'), h('p', { 'aria-busy': 'true' }, 'Loading the schema…'));
  let schema = null;

  async function execute() {
    report(err, '');
    let vars;
    try { vars = JSON.parse(variables.value.trim() || '{}'); } catch (e) { report(err, 'Variables are not JSON: ' + e.message, true); return; }
    const hd = { 'content-type': 'application/json' };
    for (const line of headers.value.split('\n')) {
      const i = line.indexOf(':');
      if (line.trim() && i > 0) hd[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    const t = await tokenOf(token.value());
    if (t) hd.authorization = t;
    run.disabled = true;
    output.setAttribute('aria-busy', 'true');
    const r = await send(new URL('../graphql', location.href), { method: 'POST', headers: hd, body: JSON.stringify({ query: editor.value, variables: vars }) });
    run.disabled = false;
    output.removeAttribute('aria-busy');
    if (r.error) { report(err, r.error, true); return; }
    report(meta, `${r.status} ${r.statusText}`);
    replace(output, pretty(r.text));
    let body = null;
    try { body = JSON.parse(r.text); } catch { /* not JSON */ }
    // Errors with a place are marked beside their lines, as the SDL editor does.
    const placed = ((body && body.errors) || []).filter((e) => e.locations && e.locations.length)
      .map((e) => ({ message: e.message, extensions: { line: e.locations[0].line, column: e.locations[0].column } }));
    editor.setErrors(placed);
  }

  const form = h('form', { class: 'playground', onsubmit: (ev) => { ev.preventDefault(); execute(); } },
    h('div', { class: 'card' }, editor.el,
      h('div', { class: 'row' }, field('Variables (JSON)', variables), field('Headers (one "name: value" a line)', headers)),
      token.el,
      h('div', { class: 'inline' }, run, meta), err),
    h('div', { class: 'card' }, h('h2', {}, 'Response'), output));
  main.append(h('p', { class: 'inline' }, h('a', { href: '#/instances' }, '← Instances'),
    h('a', { href: `#/data/${encodeURIComponent(domain)}` }, `Browse data of ${domain}`)),
  h('div', { class: 'play' }, form, docs));

  editor.el.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
  });
  attachCompletion(editor, () => schema);

  // The schema is what the chosen token may see: read again when it changes.
  let latest = 0;
  async function loadSchema() {
    const mine = ++latest;
    const r = await graphql(domain, token.value(), INTROSPECT);
    if (mine !== latest) return;
    if (!r.ok) { schema = null; replace(docs, h('h2', {}, 'Docs'), h('p', { class: 'alert error', role: 'alert' }, 'No schema: ' + describe(r))); return; }
    schema = model(r.body.data);
    docsPane(docs, schema);
  }
  loadSchema();
}

// tokenChooser picks the authorization the playground sends: the
// instance's admin session (api.js instanceAuth: what the instance token
// may do, got with the admin token), an account's session token (pasted,
// or got by logging in as the account), or none.
function tokenChooser(domain, onChange) {
  const as = h('select', {},
    h('option', { value: 'instance' }, 'Instance admin (console session)'),
    h('option', { value: 'account' }, 'Account session token'),
    h('option', { value: 'none' }, 'No token (anonymous)'));
  const acct = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false' });
  const user = h('input', { autocomplete: 'off', spellcheck: 'false' });
  const pass = h('input', { type: 'password', autocomplete: 'off' });
  const msg = status();
  const login = h('button', { type: 'button', onclick: async () => {
    report(msg, '');
    login.disabled = true;
    const r = await graphql(domain, '', 'query CoreConsoleLogin($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken errorCode errorMsg } }',
      { u: user.value.trim(), p: pass.value });
    login.disabled = false;
    const l = r.body && r.body.data && r.body.data.login;
    if (!r.ok || !l || !l.sessionToken) { report(msg, 'Not logged in: ' + (l && l.errorMsg ? `${l.errorMsg} (${l.errorCode})` : describe(r)), true); return; }
    acct.value = l.sessionToken;
    pass.value = '';
    onChange();
    report(msg, `Logged in as ${user.value.trim()}: requests now carry that account's session token.`);
  } }, 'Log in');
  const instPart = h('p', {}, 'Requests carry a short-lived admin session of this instance, which acts as its instance token.');
  const acctPart = h('div', {}, field('Account session token', acct),
    h('details', {}, h('summary', {}, 'Log in as an account'),
      h('div', { class: 'row' }, field('Username', user), field('Password', pass)), login, msg));
  const show = () => { instPart.hidden = as.value !== 'instance'; acctPart.hidden = as.value !== 'account'; };
  as.addEventListener('change', () => { show(); onChange(); });
  acct.addEventListener('change', onChange);
  show();
  return {
    el: h('fieldset', { class: 'token' }, h('legend', {}, 'Authorization'), field('Send as', as), instPart, acctPart),
    value() { return as.value === 'instance' ? instanceAuth(domain) : as.value === 'account' ? acct.value.trim() : ''; },
  };
}

// attachCompletion gives the editor's text area a completion list: an ARIA
// listbox the text area controls (aria-activedescendant), opened while a
// name is typed or by Ctrl+Space; ↑/↓ choose, Enter or Tab take, Escape
// closes.
function attachCompletion(editor, getSchema) {
  const area = editor.area;
  const frame = editor.el; // positioned (style.css): the list is placed in it
  const listId = uid('completion');
  const list = h('ul', { id: listId, role: 'listbox', class: 'completion', 'aria-label': 'Suggestions', hidden: true });
  const live = h('span', { class: 'sr-only', 'aria-live': 'polite' });
  frame.classList.add('has-completion');
  frame.append(list, live);
  area.setAttribute('aria-autocomplete', 'list');
  area.setAttribute('aria-controls', listId);
  let current = null; // {from, to, items}
  let active = 0;

  function close() {
    current = null;
    list.hidden = true;
    area.removeAttribute('aria-activedescendant');
  }

  function open(explicit) {
    const schema = getSchema();
    if (!schema) return;
    const c = complete(schema, area.value, area.selectionStart);
    if (c.items.length === 0 || (!explicit && !c.word) || (c.items.length === 1 && c.items[0].label === c.word)) { close(); return; }
    current = c;
    active = 0;
    replace(list, c.items.slice(0, 50).map((it, i) => h('li', {
      id: `${listId}-${i}`, role: 'option', 'aria-selected': i === 0 ? 'true' : 'false',
      onmousedown: (ev) => { ev.preventDefault(); active = i; take(); },
    }, h('span', { class: 'label' }, it.label), ' ', h('span', { class: 'detail' }, it.detail || ''))));
    list.hidden = false;
    place();
    select(0);
    replace(live, `${c.items.length} suggestion${c.items.length === 1 ? '' : 's'}`);
  }

  // place puts the list under the caret: the editor is monospace, so the
  // caret's line and column give its position.
  function place() {
    const before = area.value.slice(0, area.selectionStart).split('\n');
    const style = getComputedStyle(area);
    const lh = parseFloat(style.lineHeight) || 20;
    const cw = charWidth(area);
    const top = area.offsetTop + parseFloat(style.paddingTop) + before.length * lh - area.scrollTop;
    const left = area.offsetLeft + parseFloat(style.paddingLeft) + before[before.length - 1].length * cw - area.scrollLeft;
    list.style.top = `${Math.max(0, top)}px`;
    list.style.left = `${Math.max(0, Math.min(left, frame.clientWidth - list.offsetWidth))}px`;
  }

  function select(i) {
    const opts = list.children;
    if (!opts.length) return;
    active = (i + opts.length) % opts.length;
    for (const [j, o] of [...opts].entries()) o.setAttribute('aria-selected', j === active ? 'true' : 'false');
    area.setAttribute('aria-activedescendant', opts[active].id);
    opts[active].scrollIntoView({ block: 'nearest' });
  }

  function take() {
    if (!current) return;
    const it = current.items[active];
    area.setRangeText(it.label, current.from, current.to, 'end');
    close();
    area.dispatchEvent(new Event('input', { bubbles: true }));
    area.focus();
  }

  // Capture on the frame runs before the editor's own keydown (Tab indents).
  frame.addEventListener('keydown', (ev) => {
    if (ev.key === ' ' && ev.ctrlKey) { ev.preventDefault(); open(true); return; }
    if (!current) return;
    const keys = { ArrowDown: () => select(active + 1), ArrowUp: () => select(active - 1), Enter: take, Tab: take, Escape: close };
    if (keys[ev.key] && !ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); ev.stopPropagation(); keys[ev.key](); }
  }, true);
  area.addEventListener('input', (ev) => { if (ev.isTrusted) open(false); });
  area.addEventListener('blur', close);
  area.addEventListener('click', close);
  area.addEventListener('scroll', () => { if (current) place(); });
}

let measured = 0;
function charWidth(area) {
  if (measured) return measured;
  const probe = h('span', { class: 'probe' }, 'x'.repeat(40));
  probe.style.font = getComputedStyle(area).font;
  document.body.append(probe);
  measured = probe.getBoundingClientRect().width / 40 || 8;
  probe.remove();
  return measured;
}

// docsPane shows the schema's types: the root types and a filter over all
// of them; a type's fields with their arguments, types and descriptions;
// every type name a button to it; Back returns.
function docsPane(el, schema) {
  const trail = [];
  const filterInput = h('input', { type: 'search', autocomplete: 'off', spellcheck: 'false' });
  const body = h('div', { class: 'docs-body' });
  const back = h('button', { type: 'button', onclick: () => { trail.pop(); show(trail[trail.length - 1] || null, false); } }, '← Back');
  replace(el, h('h2', {}, 'Docs'), field('Find a type', filterInput), back, body);
  filterInput.addEventListener('input', () => show(null, true));

  const link = (name) => h('button', { type: 'button', class: 'link', onclick: () => show(name, true) }, name);
  const typeRef = (t) => {
    const s = typeString(t);
    const n = named(t);
    const i = s.indexOf(n);
    return h('span', { class: 'code' }, s.slice(0, i), link(n), s.slice(i + n.length));
  };

  function show(name, push) {
    if (push && name) trail.push(name);
    back.hidden = trail.length === 0;
    if (!name) {
      const f = filterInput.value.trim().toLowerCase();
      const roots = Object.entries(schema.roots).filter(([, n]) => n);
      const all = [...schema.types.keys()].filter((n) => !n.startsWith('__') && n.toLowerCase().includes(f)).sort();
      replace(body,
        f ? null : h('div', {}, h('h3', {}, 'Root types'), h('ul', {}, roots.map(([op, n]) => h('li', {}, `${op}: `, link(n))))),
        h('h3', {}, f ? `Types matching “${f}”` : 'All types'),
        h('ul', { class: 'types-list' }, all.map((n) => h('li', {}, link(n)))));
      return;
    }
    const t = schema.types.get(name);
    if (!t) return;
    const fieldsOf = t.fields || t.inputFields || [];
    const title = h('h3', { tabindex: '-1' }, `${name} `, h('small', {}, t.kind.toLowerCase()));
    replace(body, title,
      t.description ? h('p', {}, t.description) : null,
      fieldsOf.length ? h('dl', { class: 'fields' }, fieldsOf.map((f) => [
        h('dt', {}, h('span', { class: 'code' }, f.name),
          f.args && f.args.length ? h('span', { class: 'code' }, '(', f.args.map((a, i) => [i ? ', ' : '', a.name, ': ', typeRef(a.type)]), ')') : null,
          h('span', { class: 'code' }, ': '), typeRef(f.type)),
        h('dd', {}, f.description || '',
          (f.args || []).filter((a) => a.description).map((a) => h('div', {}, h('span', { class: 'code' }, a.name), ': ', a.description))),
      ])) : null,
      t.enumValues ? h('ul', {}, t.enumValues.map((v) => h('li', {}, h('span', { class: 'code' }, v.name), v.description ? ` — ${v.description}` : ''))) : null,
      t.possibleTypes && t.possibleTypes.length ? h('p', {}, 'One of: ', t.possibleTypes.map((p, i) => [i ? ', ' : '', link(p.name)])) : null);
    title.focus();
  }
  show(null, false);
}
