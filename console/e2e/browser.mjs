// What the console's browser tests share: the settings they are given
// (environment variables) and the browser they drive.
import { chromium } from 'playwright-core';

// need returns the environment variable name, or ends the script saying
// it is not set.
export function need(name) {
  const v = process.env[name];
  if (!v) { console.error(`${name} is not set`); process.exit(2); }
  return v;
}

// launch starts Debian's chromium (CHROMIUM, else /usr/bin/chromium),
// headless. As root in a closed network: no sandbox, and no background
// connections that the network would refuse.
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}
