// The webhook function of testdata/images/echo: it greets the request
// body and says where it runs from.
const { greeting } = require('./greeting');

exports.main = function (input, callback) {
  const payload = JSON.parse(input.args.payload);
  callback({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: { from: 'image', greeting: greeting(payload.body), path: payload.url.path },
  }, null);
};
