// stripe-store verifies a Stripe-style signature over the raw body
// (Stripe-Signature: t=<time>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>)
// with the instance's STRIPE_SECRET, stores the event as a Payment through
// the instance's GraphQL API with the call's token, and answers 200; a bad
// signature answers 400 and stores nothing.
const crypto = require('crypto');

exports.main = async function (input, callback) {
  const payload = JSON.parse(input.args.payload);
  const header = payload.headers['stripe-signature'] || '';
  const parts = {};
  for (const item of header.split(',')) {
    const i = item.indexOf('=');
    if (i > 0) parts[item.slice(0, i).trim()] = item.slice(i + 1).trim();
  }
  const want = crypto.hmacSHA256(input.env.STRIPE_SECRET, parts.t + '.' + payload.body);
  if (!parts.t || !parts.v1 || !crypto.equal(parts.v1, want)) {
    callback({ status: 400, body: { error: 'bad signature' } }, null);
    return;
  }
  const event = JSON.parse(payload.body);
  const res = await core.graphql(
    'mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
    { v: { Payment: [{ eventId: event.id, kind: event.type, amount: event.data.amount }] } });
  if (res.errors) {
    callback(null, { code: 'STORE_FAILED', message: res.errors[0].message });
    return;
  }
  callback({ status: 200, body: { received: true, id: res.data.upsert[0].id } }, null);
};
