// Subscriptions through the real client libraries, against a running
// server (gql/e2e_clients_test.go starts it and runs this script):
// graphql-ws's createClient (graphql-transport-ws), graphql-sse's
// createClient in distinct connections mode, and a hand-written client of
// the legacy graphql-ws protocol (subscriptions-transport-ws) on the ws
// package. Writes go through GraphQL and REST with fetch.
//
// Environment: CORE_URL (http://host:port), CORE_DOMAIN, CORE_TOKEN (the
// instance token), CORE_ADA_TOKEN and CORE_BOB_TOKEN (session tokens of
// two accounts; ada's is logged out at the end). It prints "ok" on the
// last line when every check passed and exits 1 with the failure
// otherwise. It waits on events only; HANG_GUARD_MS bounds each wait.

import assert from 'node:assert/strict';
import { env } from './env.mjs';
import { Feed } from './feed.mjs';
import WebSocket from 'ws';
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';

const base = env('CORE_URL');
const domain = env('CORE_DOMAIN');
const instanceToken = env('CORE_TOKEN');
const adaToken = env('CORE_ADA_TOKEN');
const bobToken = env('CORE_BOB_TOKEN');
const wsURL = base.replace(/^http/, 'ws') + '/graphql';

const log = (...a) => console.log(...a);

// ---- writes, through GraphQL and REST

async function call(method, path, token, body) {
  const headers = { 'core-domain': domain, authorization: token };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const out = await res.json();
  if (res.status !== 200 || out.errors) {
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
  }
  return out.data;
}
const graphql = (token, query, variables) => call('POST', '/graphql', token, { query, variables });
const upsert = async (token, type, value) =>
  (await graphql(token, 'mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }', { v: { [type]: value } })).upsert[0].id;
const byID = (id) => ({ q: `core.id = "${id}"` });

// ---- events

// ---- the clients

// wsClient is a graphql-ws client (graphql-transport-ws) for token.
function wsClient(token) {
  const client = createWSClient({
    url: wsURL,
    webSocketImpl: WebSocket,
    connectionParams: { 'core-domain': domain, authorization: token },
    retryAttempts: 0,
  });
  return {
    client,
    subscribe(name, query, variables) {
      const feed = new Feed(name);
      feed.dispose = client.subscribe({ query, variables }, {
        next: (r) => feed.result(r),
        error: (err) => feed.push({ errors: Array.isArray(err) ? err : [{ message: String(err?.reason ?? err) }] }),
        complete: () => feed.push({ complete: true }),
      });
      return feed;
    },
    // started resolves once every subscription sent before it runs: the
    // server handles a connection's messages in order (gql/websocket.go),
    // so a query's answer comes after the subscriptions sent before it
    // started reading the feed.
    async started() {
      for await (const r of client.iterate({ query: '{ __typename }' })) {
        assert.equal(r.data.__typename, 'Query');
      }
    },
  };
}

// sseSubscribe opens a subscription with a graphql-sse client in
// distinct connections mode and resolves once the server answered its
// headers (from then on every change reaches it).
async function sseSubscribe(name, token, query, variables, headers = {}) {
  const client = createSSEClient({
    url: base + '/graphql',
    singleConnection: false,
    headers: { 'core-domain': domain, authorization: token, ...headers },
    retryAttempts: 0,
  });
  const feed = new Feed(name);
  const connected = new Promise((resolve) => {
    feed.dispose = client.subscribe({ query, variables }, {
      next: (r) => feed.result(r),
      error: (err) => feed.push({ errors: [{ message: String(err) }] }),
      complete: () => feed.push({ complete: true }),
    }, { connected: resolve });
  });
  feed.client = client;
  await connected;
  return feed;
}

// LegacyClient speaks the legacy graphql-ws protocol of
// subscriptions-transport-ws by hand: connection_init, connection_ack, ka,
// start, data, error, complete, stop, connection_terminate.
class LegacyClient {
  constructor(name) {
    this.name = name;
    this.feeds = new Map();
    this.control = new Feed(name + ' (connection)');
    this.kas = 0;
  }
  async open(token) {
    this.ws = new WebSocket(wsURL, 'graphql-ws');
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    this.ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      if (m.type === 'ka') {
        this.kas++;
        this.control.push(m);
        return;
      }
      const feed = this.feeds.get(m.id);
      if (!feed) return this.control.push(m);
      if (m.type === 'data') feed.result(m.payload);
      else if (m.type === 'error') feed.push({ errors: [m.payload] });
      else if (m.type === 'complete') feed.push({ complete: true });
      else feed.push({ unexpected: m });
    });
    await new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    assert.equal(this.ws.protocol, 'graphql-ws');
    this.send({ type: 'connection_init', payload: { 'core-domain': domain, authorization: token } });
    assert.equal((await this.control.next('connection_init')).type, 'connection_ack', `${this.name}: connection_init`);
    // The server sends a first keep-alive at once, then one every 12 s.
    assert.equal((await this.control.next('after the ack')).type, 'ka', `${this.name}: a ka after the ack`);
  }
  send(m) {
    this.ws.send(JSON.stringify(m));
  }
  start(id, query, variables) {
    const feed = new Feed(`${this.name} ${id}`);
    this.feeds.set(id, feed);
    feed.dispose = () => this.send({ id, type: 'stop' });
    this.send({ id, type: 'start', payload: { query, variables } });
    return feed;
  }
  // started resolves once the operations started before it run (as
  // wsClient's started: one connection's messages are handled in order).
  async started() {
    const id = 'started-' + this.feeds.size;
    const feed = this.start(id, '{ __typename }');
    const item = await feed.next('a query after the subscriptions');
    assert.equal(item.query?.__typename, 'Query', `${this.name}: a query's data`);
    assert.ok((await feed.next('its complete')).complete, `${this.name}: a query's complete`);
  }
  async stop(id) {
    this.send({ id, type: 'stop' });
    assert.ok((await this.feeds.get(id).next('stop')).complete, `${this.name}: stop answered with complete`);
  }
  async terminate() {
    this.send({ type: 'connection_terminate' });
    const { code } = await this.closed;
    assert.equal(code, 1000, `${this.name}: closed after connection_terminate`);
  }
}

// ---- the scenario

const authorChanges = `subscription($q: String, $id: String, $after: String) {
  subscribe(type: Author, arcql: $q, id: $id, after: $after) { op id changed cursor node { ... on Author { name age } } } }`;
const bookChanges = `subscription { subscribe(type: Book) { op id node { ... on Book { title } } } }`;

async function everyOp() {
  const ws = wsClient(instanceToken);
  const legacy = new LegacyClient('legacy');
  await legacy.open(instanceToken);
  const all = {
    'graphql-ws': ws.subscribe('graphql-ws all', authorChanges),
    'graphql-sse': await sseSubscribe('graphql-sse all', instanceToken, authorChanges),
    legacy: legacy.start('all', authorChanges),
  };
  const ann = {
    'graphql-ws': ws.subscribe('graphql-ws filtered', authorChanges, { q: 'name = "ann"' }),
    'graphql-sse': await sseSubscribe('graphql-sse filtered', instanceToken, authorChanges, { q: 'name = "ann"' }),
    legacy: legacy.start('filtered', authorChanges, { q: 'name = "ann"' }),
  };
  await ws.started();
  await legacy.started();

  // bob first: the filtered subscriptions leave him out, so their first
  // event is ann's.
  const bob = await upsert(instanceToken, 'Author', { name: 'bob' });
  for (const f of Object.values(all)) {
    await f.change('bob created', { op: 'CREATED', id: bob, changed: ['name'], node: { name: 'bob', age: null } });
  }
  const id = await upsert(instanceToken, 'Author', { name: 'ann' });
  const annNode = { name: 'ann', age: null };
  for (const f of [...Object.values(all), ...Object.values(ann)]) {
    await f.change('ann created', { op: 'CREATED', id, changed: ['name'], node: annNode });
  }

  // One record, by id.
  const one = {
    'graphql-ws': ws.subscribe('graphql-ws one record', authorChanges, { id }),
    'graphql-sse': await sseSubscribe('graphql-sse one record', instanceToken, authorChanges, { id }),
    legacy: legacy.start('one', authorChanges, { id }),
  };
  await ws.started();
  await legacy.started();
  const watching = [...Object.values(all), ...Object.values(ann), ...Object.values(one)];

  // UPDATED through REST.
  await call('PUT', '/rest/v1/', instanceToken, { values: { Author: { core: { id }, age: 40 } } });
  annNode.age = 40;
  let cursorUpdated;
  for (const f of watching) {
    const got = await f.change('ann updated (REST)', { op: 'UPDATED', id, changed: ['age'], node: annNode });
    cursorUpdated ??= got.cursor;
    assert.equal(got.cursor, cursorUpdated, `${f.name}: one change, one cursor`);
  }
  // bob changes: only the unfiltered subscriptions see it (the others'
  // next event is ann's trash).
  await upsert(instanceToken, 'Author', { core: { id: bob }, age: 50 });
  for (const f of Object.values(all)) {
    await f.change('bob updated', { op: 'UPDATED', id: bob, changed: ['age'], node: { name: 'bob', age: 50 } });
  }

  await graphql(instanceToken, 'mutation($q: String!) { trash(type: Author, arcql: $q) }', byID(id));
  for (const f of watching) await f.change('ann trashed', { op: 'TRASHED', id, changed: [], node: annNode });
  await graphql(instanceToken, 'mutation($q: String!) { untrash(type: Author, arcql: $q) }', byID(id));
  for (const f of watching) await f.change('ann untrashed', { op: 'UNTRASHED', id, changed: [], node: annNode });
  await call('DELETE', `/rest/v1/Author/${id}`, instanceToken);
  for (const f of watching) await f.change('ann deleted (REST)', { op: 'DELETED', id, changed: [], node: null });
  log('graphql-ws, graphql-sse, legacy: CREATED UPDATED TRASHED UNTRASHED DELETED; all, filtered, one record');

  // Resumed after the update: the changes since are replayed. graphql-sse
  // keeps no event ids (its parser drops the id field and it never sends
  // Last-Event-ID, reconnecting afresh), so Last-Event-ID is given as a
  // header here, the cursor taken from the payload.
  const resumed = {
    'graphql-ws after': ws.subscribe('graphql-ws resumed', authorChanges, { after: cursorUpdated }),
    'graphql-sse after': await sseSubscribe('graphql-sse resumed', instanceToken, authorChanges, { after: cursorUpdated }),
    'graphql-sse Last-Event-ID': await sseSubscribe('graphql-sse Last-Event-ID', instanceToken, authorChanges, undefined,
      { 'last-event-id': cursorUpdated }),
    legacy: legacy.start('resumed', authorChanges, { after: cursorUpdated }),
  };
  for (const f of Object.values(resumed)) {
    await f.change('replay: bob updated', { op: 'UPDATED', id: bob });
    await f.change('replay: ann trashed', { op: 'TRASHED', id });
    await f.change('replay: ann untrashed', { op: 'UNTRASHED', id });
    await f.change('replay: ann deleted', { op: 'DELETED', id, node: null });
  }
  log('resumed (after, Last-Event-ID): the changes since replayed in order');

  // stop / complete end a subscription; the others go on.
  await legacy.stop('all');
  for (const f of [...Object.values(all), ...Object.values(ann), ...Object.values(one), ...Object.values(resumed)]) {
    if (f !== all.legacy) f.dispose();
  }
  await legacy.terminate();
  await ws.client.dispose();
}

async function accessAndLogout() {
  // Each account subscribes with its session; books follow the owner
  // rule (an account reads only its own).
  const adaWS = wsClient(adaToken), bobWS = wsClient(bobToken);
  const adaLegacy = new LegacyClient('ada legacy'), bobLegacy = new LegacyClient('bob legacy');
  await adaLegacy.open(adaToken);
  await bobLegacy.open(bobToken);
  const ada = [
    adaWS.subscribe('ada graphql-ws', bookChanges),
    await sseSubscribe('ada graphql-sse', adaToken, bookChanges),
    adaLegacy.start('books', bookChanges),
  ];
  const bob = [
    bobWS.subscribe('bob graphql-ws', bookChanges),
    await sseSubscribe('bob graphql-sse', bobToken, bookChanges),
    bobLegacy.start('books', bookChanges),
  ];
  await Promise.all([adaWS.started(), bobWS.started(), adaLegacy.started(), bobLegacy.started()]);

  // a1, b1, a2, b2 in that order: each account's next event after its
  // first is its second record, so the other's between was never sent.
  const a1 = await upsert(adaToken, 'Book', { title: 'a1' });
  const b1 = await upsert(bobToken, 'Book', { title: 'b1' });
  const a2 = await upsert(adaToken, 'Book', { title: 'a2' });
  const b2 = await upsert(bobToken, 'Book', { title: 'b2' });
  for (const f of ada) {
    await f.change('ada: her first book', { op: 'CREATED', id: a1, node: { title: 'a1' } });
    await f.change('ada: her second book, not bob\'s', { op: 'CREATED', id: a2, node: { title: 'a2' } });
  }
  for (const f of bob) {
    await f.change('bob: his first book', { op: 'CREATED', id: b1, node: { title: 'b1' } });
    await f.change('bob: his second book, not ada\'s', { op: 'CREATED', id: b2, node: { title: 'b2' } });
  }
  log('owner rule: each account received only its own records');

  // ada logs out: her subscriptions end with UNAUTHENTICATED on every
  // transport (the server checks sessions every SessionCheck); bob's go on.
  await graphql(adaToken, 'mutation { logout }');
  for (const f of ada) await f.unauthenticated('after the logout');
  const [adaWSFeed, adaSSEFeed] = ada;
  assert.equal(adaWSFeed.items.length, 0, 'graphql-ws: error ends the subscription (no complete after it)');
  assert.ok((await adaSSEFeed.next('complete after the error')).complete, 'graphql-sse: complete after the error');
  const b3 = await upsert(bobToken, 'Book', { title: 'b3' });
  for (const f of bob) await f.change('bob after ada\'s logout', { op: 'CREATED', id: b3, node: { title: 'b3' } });
  log('logout: ada\'s subscriptions ended with UNAUTHENTICATED; bob\'s went on');

  for (const f of bob) f.dispose();
  await Promise.all([adaLegacy.terminate(), bobLegacy.terminate()]);
  await Promise.all([adaWS.client.dispose(), bobWS.client.dispose()]);
}

try {
  await everyOp();
  await accessAndLogout();
  console.log('ok');
  process.exit(0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
