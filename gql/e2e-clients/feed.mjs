// Feed, shared by the scripts here: what one subscription receives,
// queued, and read in order with a bound on each wait (HANG_GUARD_MS).

import assert from 'node:assert/strict';

const hangGuard = Number(process.env.HANG_GUARD_MS || 30000);

// A Feed queues what one subscription receives: {change} for a data
// message, {errors} for an error, {complete} when it ends.
export class Feed {
  constructor(name) {
    this.name = name;
    this.items = [];
    this.waiting = null;
  }
  push(item) {
    this.items.push(item);
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w();
    }
  }
  // next resolves to the next item, failing after the hang guard.
  async next(step) {
    if (this.items.length === 0) {
      let timer;
      await Promise.race([
        new Promise((resolve) => { this.waiting = resolve; }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${this.name}: nothing received within ${hangGuard} ms (${step})`)), hangGuard);
        }),
      ]).finally(() => clearTimeout(timer));
    }
    return this.items.shift();
  }
  // result takes an execution result: {errors}, a subscription's
  // {data: {subscribe}} or a query's {data}.
  result(r) {
    if (r.errors) this.push({ errors: r.errors });
    else if ('subscribe' in r.data) this.push({ change: r.data.subscribe });
    else this.push({ query: r.data });
  }
  // change reads the next item, which must be a change, and compares
  // it with want (op, id and, where given, changed and node).
  async change(step, want) {
    const item = await this.next(step);
    assert.ok(item.change, `${this.name}, ${step}: got ${JSON.stringify(item)}, want a change`);
    const got = item.change;
    const cmp = { op: got.op, id: got.id };
    if ('changed' in want) cmp.changed = got.changed;
    if ('node' in want) cmp.node = got.node;
    assert.deepEqual(cmp, want, `${this.name}, ${step}`);
    return got;
  }
  // unauthenticated reads the end of a subscription whose session ended.
  async unauthenticated(step) {
    const item = await this.next(step);
    assert.equal(item.errors?.[0]?.extensions?.code, 'UNAUTHENTICATED', `${this.name}, ${step}: got ${JSON.stringify(item)}`);
  }
}
