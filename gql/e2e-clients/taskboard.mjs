// The access rules of the task board (boardSDL in gql/e2e_rules_test.go)
// through the real subscription client libraries: graphql-ws's
// createClient and graphql-sse's createClient, in distinct connections
// mode. gql/e2e_rules_test.go builds the board, starts the server and runs
// this script. A Task is read by its board's creator and the board's
// team: alice's board ALPHA has bob and dan in its team; carol's public
// board GAMMA has no team.
//
// Environment: CORE_URL (http://host:port), CORE_DOMAIN, the session
// tokens CORE_ALICE_TOKEN, CORE_BOB_TOKEN, CORE_CAROL_TOKEN and
// CORE_DAN_TOKEN, and the board ids CORE_ALPHA and CORE_GAMMA. It prints
// "ok" on the last line when every check passed and exits 1 with the
// failure otherwise. It waits on events only; HANG_GUARD_MS bounds each
// wait. That a subscriber was not sent a change is shown by its next
// event being a later change, never by waiting for nothing.

import assert from 'node:assert/strict';
import { env } from './env.mjs';
import { Feed } from './feed.mjs';
import WebSocket from 'ws';
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';

const base = env('CORE_URL');
const domain = env('CORE_DOMAIN');
const token = {
  alice: env('CORE_ALICE_TOKEN'),
  bob: env('CORE_BOB_TOKEN'),
  carol: env('CORE_CAROL_TOKEN'),
  dan: env('CORE_DAN_TOKEN'),
};
const alpha = env('CORE_ALPHA');
const gamma = env('CORE_GAMMA');
const wsURL = base.replace(/^http/, 'ws') + '/graphql';

// ---- writes, through GraphQL and REST

// call answers the response's status and body.
async function call(method, path, token, body) {
  const headers = { 'core-domain': domain, authorization: token, 'content-type': 'application/json' };
  const res = await fetch(base + path, { method, headers, body: JSON.stringify(body) });
  return { status: res.status, out: await res.json() };
}
async function upsertTask(token, value) {
  const { status, out } = await call('POST', '/graphql', token, {
    query: 'mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
    variables: { v: { Task: value } },
  });
  assert.ok(status === 200 && !out.errors, `upsert ${JSON.stringify(value)}: ${status} ${JSON.stringify(out)}`);
  return out.data.upsert[0].id;
}
const onBoard = (id) => ({ core: { id } });

// ---- events

// wsSubscribe opens a subscription with a graphql-ws client and resolves
// once the server runs it: the server handles a connection's messages in
// order (gql/websocket.go), so a query's answer after it means the
// subscription is reading the feed.
async function wsSubscribe(name, token, query) {
  const client = createWSClient({
    url: wsURL,
    webSocketImpl: WebSocket,
    connectionParams: { 'core-domain': domain, authorization: token },
    retryAttempts: 0,
  });
  const feed = new Feed(name);
  client.subscribe({ query }, {
    next: (r) => feed.result(r),
    error: (err) => feed.push({ errors: Array.isArray(err) ? err : [{ message: String(err?.reason ?? err) }] }),
    complete: () => feed.push({ complete: true }),
  });
  for await (const r of client.iterate({ query: '{ __typename }' })) {
    assert.equal(r.data.__typename, 'Query');
  }
  feed.close = () => client.dispose();
  return feed;
}

// sseSubscribe opens a subscription with a graphql-sse client and
// resolves once the server answered its headers.
async function sseSubscribe(name, token, query) {
  const client = createSSEClient({
    url: base + '/graphql',
    singleConnection: false,
    headers: { 'core-domain': domain, authorization: token },
    retryAttempts: 0,
  });
  const feed = new Feed(name);
  await new Promise((resolve) => {
    const dispose = client.subscribe({ query }, {
      next: (r) => feed.result(r),
      error: (err) => feed.push({ errors: [{ message: String(err) }] }),
      complete: () => feed.push({ complete: true }),
    }, { connected: resolve });
    feed.close = () => { dispose(); client.dispose(); };
  });
  return feed;
}

// ---- the scenario

const taskEvents = 'subscription { subscribe(type: Task) { op id node { ... on Task { title } } } }';
const created = (id, title) => ({ op: 'CREATED', id, node: { title } });

try {
  const team = [
    await wsSubscribe('alice graphql-ws', token.alice, taskEvents),
    await sseSubscribe('dan graphql-sse', token.dan, taskEvents),
  ];
  const carol = [
    await wsSubscribe('carol graphql-ws', token.carol, taskEvents),
    await sseSubscribe('carol graphql-sse', token.carol, taskEvents),
  ];

  // Interleaved so that each change a subscriber must not be sent is
  // followed by one it must: alice and dan see bob's, carol sees hers.
  const bobOne = await upsertTask(token.bob, { title: 'bob one', board: onBoard(alpha) });
  const bobTwo = await upsertTask(token.bob, { title: 'bob two', board: onBoard(alpha) });
  const carolOne = await upsertTask(token.carol, { title: 'carol one', board: onBoard(gamma) });
  const bobThree = await upsertTask(token.bob, { title: 'bob three', board: onBoard(alpha) });
  const carolTwo = await upsertTask(token.carol, { title: 'carol two', board: onBoard(gamma) });
  // bob changes his first task through REST: he may, as its creator (the
  // owner rule widens the update rule, which names the board's creator).
  const edit = await call('PUT', '/rest/v1/', token.bob, { values: { Task: { core: { id: bobOne }, title: 'bob one, edited' } } });
  assert.ok(edit.status === 200 && !edit.out.errors, `bob's REST update: ${edit.status} ${JSON.stringify(edit.out)}`);
  const carolThree = await upsertTask(token.carol, { title: 'carol three', board: onBoard(gamma) });

  // alice and dan: bob's three tasks in order, then the update; neither
  // of carol's tasks before it.
  for (const f of team) {
    await f.change('bob one', created(bobOne, 'bob one'));
    await f.change('bob two', created(bobTwo, 'bob two'));
    await f.change('bob three, not carol one', created(bobThree, 'bob three'));
    await f.change('bob one updated (REST), not carol two', { op: 'UPDATED', id: bobOne, node: { title: 'bob one, edited' } });
  }
  console.log('alice (graphql-ws), dan (graphql-sse): bob\'s tasks CREATED and UPDATED (REST), none of carol\'s');
  // carol: her own tasks only; bob's two before her first, his third and
  // the update between, unseen.
  for (const f of carol) {
    await f.change('her first task, not bob one or two', created(carolOne, 'carol one'));
    await f.change('her second, not bob three', created(carolTwo, 'carol two'));
    await f.change('her third, not bob\'s update', created(carolThree, 'carol three'));
  }
  console.log('carol (graphql-ws, graphql-sse): her own tasks only');

  for (const f of [...team, ...carol]) await f.close();
  console.log('ok');
  process.exit(0);
} catch (err) {
  console.error(err);
  process.exit(1);
}
