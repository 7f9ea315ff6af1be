// verify-github checks a GitHub webhook signature (X-Hub-Signature-256:
// sha256=<hex HMAC-SHA256(secret, body)>) with the one-call helpers.
const crypto = require('crypto');

exports.main = function (input, callback) {
  const payload = JSON.parse(input.args.payload);
  const given = payload.headers['x-hub-signature-256'] || '';
  const want = 'sha256=' + crypto.hmacSHA256(input.env.GITHUB_SECRET, payload.body);
  if (given.length !== want.length || !crypto.timingSafeEqual(Buffer.from(given), Buffer.from(want))) {
    callback({ status: 401, body: 'bad signature' }, null);
    return;
  }
  callback({ status: 200, body: { event: payload.headers['x-github-event'] || null } }, null);
};
