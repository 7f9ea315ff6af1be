// async-fetch fetches input.args.url and answers its status and body: an
// async main whose returned promise is the answer.
exports.main = async function (input) {
  const res = await fetch(input.args.url, { headers: { accept: 'application/json' } });
  return { status: res.status, ok: res.ok, body: await res.text(), type: res.headers.get('content-type') };
};
