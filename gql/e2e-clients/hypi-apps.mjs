// Hypi's public to-do example apps (testdata/e2e/hypi-apps), run against
// Core through graphql-js: the client builds the instance's schema from
// introspection (it must be valid GraphQL), validates each of the app's
// document files against it as the app ships them, and sends the app's
// operations as the app does: sign-up with emails: [{value: $email}],
// loginByEmail, upsert with CoreUpsertInputUnion, find and get with the
// fragments selecting core { id }, delete with its defaulted
// $clearArrayReferences. gql/e2e_hypi_apps_test.go starts the server.
//
// Environment: CORE_URL, CORE_DOMAIN, CORE_TOKEN (the instance token),
// APP_DIR (the app's folder of .graphql files), APP (react-todo or
// angular-todo). Prints "ok" on the last line when every check passed.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { env } from './env.mjs';
import { buildClientSchema, getIntrospectionQuery, parse, print, validate, validateSchema, Kind } from 'graphql';

const base = env('CORE_URL');
const domain = env('CORE_DOMAIN');
const instanceToken = env('CORE_TOKEN');
const dir = env('APP_DIR');
const app = env('APP');

async function send(token, query, variables, operationName) {
  const res = await fetch(base + '/graphql', {
    method: 'POST',
    headers: { 'core-domain': domain, authorization: token, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables, operationName }),
  });
  const out = await res.json();
  if (res.status !== 200 || out.errors) {
    throw new Error(`${operationName}: ${res.status} ${JSON.stringify(out)}`);
  }
  return out.data;
}

// ---- the schema, as a standard client builds it

const schema = buildClientSchema(await send(instanceToken, getIntrospectionQuery(), {}, 'IntrospectionQuery'));
assert.deepEqual(validateSchema(schema).map(String), [], 'the introspected schema is valid GraphQL');
const item = schema.getType('Item');
assert.ok(item && item.constructor.name === 'GraphQLInterfaceType', "the app's interface Item is an interface");

// ---- the app's documents, each file validated as the app ships it

const files = {};
for (const name of readdirSync(dir).filter((f) => f.endsWith('.graphql') && f !== 'schema.graphql')) {
  files[name] = readFileSync(join(dir, name), 'utf8');
}
// Fragments defined in one file and spread in another are joined, as the
// apps' code generators join them.
const fragments = {};
for (const text of Object.values(files)) {
  for (const def of parse(text).definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = print(def);
  }
}
const operations = {}; // name -> the text that defines it, with the fragments it lacks
for (const [name, text] of Object.entries(files)) {
  let doc = parse(text);
  const defined = new Set(doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => d.name.value));
  const spread = [...text.matchAll(/\.\.\.(\w+)/g)].map((m) => m[1]).filter((f) => !defined.has(f));
  const full = [text, ...new Set(spread)].map((f, i) => (i === 0 ? f : fragments[f])).join('\n');
  doc = parse(full);
  assert.deepEqual(validate(schema, doc).map(String), [], `${name} validates against the introspected schema`);
  for (const def of doc.definitions) {
    if (def.kind === Kind.OPERATION_DEFINITION) operations[`${name}#${def.name.value}`] = full;
  }
}
const run = (token, op, variables) => {
  const name = op.split('#')[1];
  const text = operations[op];
  assert.ok(text, `the app has the operation ${op}: ${Object.keys(operations)}`);
  return send(token, text, variables, name);
};

// ---- sign up and log in by e-mail

const email = `${app}@example.com`;
const password = 'Hypi-App-Pass-1';
const account = (await run(instanceToken, 'auth.graphql#createAccount', { username: app, password, email })).createAccount;
assert.ok(account.id && account.created, `createAccount answers the account's metadata: ${JSON.stringify(account)}`);
const login = (await run('', 'auth.graphql#loginByEmail', { email, password })).loginByEmail;
assert.ok(login.sessionToken, `loginByEmail: ${JSON.stringify(login)}`);
assert.equal(login.errorCode, null);
const wrong = (await run('', 'auth.graphql#loginByEmail', { email, password: 'not it' })).loginByEmail;
assert.equal(wrong.sessionToken, null);
assert.ok(wrong.errorCode, 'a wrong password answers an error code');
const token = login.sessionToken;

// ---- the app's records: upsert, find, get, delete

const scenarios = {
  'react-todo': [
    {
      upsert: 'products-mutation.graphql#upsert', find: 'products.graphql#products', get: 'get-product.graphql#getProduct',
      remove: 'delete-product.graphql#delete', type: 'Product',
      records: [{ title: 'lamp', description: 'a desk lamp' }, { title: 'chair', description: 'an office chair' }],
    },
    {
      upsert: 'todos.graphql#upsert', find: 'todos.graphql#getTodos', remove: 'todos.graphql#deleteItem', type: 'Todos',
      records: [{ title: 'milk', person: 'grace', date: '2026-01-02T03:04:05.000Z', status: 'open' }, { title: 'bread', person: 'alan', status: 'done' }],
    },
  ],
  'angular-todo': [
    {
      upsert: 'upsert.graphql#Upsert', find: 'todos.graphql#todos', get: 'get-todos.graphql#getTodo',
      remove: 'delete-todos.graphql#delete', type: 'Todos',
      records: [{ id: 1, title: 'milk', description: 'two litres', completed: false }, { id: 2, title: 'bread', description: 'rye', completed: false }],
    },
  ],
};
const shown = (rec, node) => Object.fromEntries(Object.keys(node).filter((k) => k !== 'core').map((k) => [k, rec[k] ?? null]));
for (const s of scenarios[app]) {
  const made = (await run(token, s.upsert, { values: { [s.type]: s.records } })).upsert;
  assert.equal(made.length, s.records.length, `upsert answers one id per record: ${JSON.stringify(made)}`);
  const edges = (await run(token, s.find, { arcql: '*' })).find.edges;
  assert.equal(edges.length, s.records.length);
  for (const [i, e] of edges.entries()) {
    assert.equal(e.node.core.id, made[i].id, 'find selects core { id } through the fragment');
    assert.deepEqual(e.node, { core: { id: made[i].id }, ...shown(s.records[i], e.node) });
  }
  const first = made[0].id;
  const one = (await run(token, s.find, { arcql: `title = '${s.records[1].title}'` })).find.edges;
  assert.deepEqual(one.map((e) => e.node.core.id), [made[1].id], 'find by an ArcQL filter');
  if (s.get) {
    const got = (await run(token, s.get, { id: first })).get;
    assert.deepEqual(got, { core: { id: first }, ...shown(s.records[0], got) });
  }
  // An update as the apps send it: the id in core, the changed fields.
  await run(token, s.upsert, { values: { [s.type]: [{ core: { id: first }, title: 'renamed' }] } });
  const renamed = (await run(token, s.find, { arcql: `core.id = '${first}'` })).find.edges;
  assert.equal(renamed[0].node.title, 'renamed');
  // delete with $clearArrayReferences left to its default.
  assert.equal((await run(token, s.remove, { arcql: `core.id = '${first}'` })).delete, 1);
  if (s.get) assert.equal((await run(token, s.get, { id: first })).get, null);
  assert.deepEqual((await run(token, s.find, { arcql: '*' })).find.edges.map((e) => e.node.core.id), [made[1].id]);
  // The instance token reads the app's records too.
  assert.deepEqual((await run(instanceToken, s.find, { arcql: '*' })).find.edges.length, 1, 'the instance token sees the record');
}

console.log('ok');
