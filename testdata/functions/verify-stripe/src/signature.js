const crypto = require('crypto');

// verify reports whether a Stripe-Signature header signs body with secret.
exports.verify = function (secret, header, body) {
  const parts = {};
  for (const item of String(header || '').split(',')) {
    const i = item.indexOf('=');
    if (i > 0) {
      const k = item.slice(0, i).trim();
      (parts[k] = parts[k] || []).push(item.slice(i + 1).trim());
    }
  }
  if (!parts.t || !parts.v1) {
    return false;
  }
  const expected = crypto.createHmac('sha256', secret).update(parts.t[0] + '.' + body).digest('hex');
  return parts.v1.some((sig) => crypto.equal(sig, expected));
};
