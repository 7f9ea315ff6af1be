// verify-stripe checks a Stripe-style webhook signature over the raw body
// and answers a WebhookResponse: 200 when it matches, 400 otherwise.
//
//   Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// input.args.payload is the WebhookPayload as JSON text; the secret is the
// instance's STRIPE_SECRET (listed in the binding's env).
const { verify } = require('./signature');

exports.main = async function (input, callback) {
  const payload = JSON.parse(input.args.payload);
  const secret = input.env.STRIPE_SECRET;
  if (!secret) {
    callback(null, { code: 'NOT_CONFIGURED', message: 'STRIPE_SECRET is not set' });
    return;
  }
  const header = headerValue(payload.headers, 'stripe-signature');
  if (!verify(secret, header, payload.body || '')) {
    callback({ status: 400, headers: { 'content-type': 'application/json' }, body: { error: 'bad signature' } }, null);
    return;
  }
  const event = JSON.parse(payload.body);
  console.log('verified event', event.id, 'of type', event.type);
  callback({ status: 200, body: { received: true, id: event.id } }, null);
};

// headerValue finds a header whatever the case of its name; a list keeps
// its first value.
function headerValue(headers, name) {
  for (const key of Object.keys(headers || {})) {
    if (key.toLowerCase() === name) {
      const v = headers[key];
      return Array.isArray(v) ? v[0] : v;
    }
  }
  return '';
}
