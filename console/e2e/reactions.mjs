// An instance's reactions in the console: run by
// console/reactions_e2e_test.go against a real server with instance
// react.test, an event hook pointed at a real receiver and a scheduled
// function that has run once. node reactions.mjs, with CORE_URL,
// CORE_ADMIN_TOKEN, HOOK_URL and CHROMIUM.
//
// From the instances list to the reactions view: the hook with its
// delivery log, a test event sent and shown delivered; the schedule with
// its last and next run. It waits for elements, never for a fixed time,
// and prints "ok" at the end.
import { finish, launch, need, signIn } from './browser.mjs';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const hookURL = need('HOOK_URL');

const failures = [];

const browser = await launch();
let page;
try {
  page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15000);
  await signIn(page, base, adminToken);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Instances' }).click();
  await page.getByRole('link', { name: 'Reactions of react.test' }).click();
  await page.getByRole('heading', { name: 'Reactions of react.test', level: 1 }).waitFor();

  // The hook, its delivery log (the change the test made), a test event.
  const hook = page.getByRole('article', { name: `Event hook ${hookURL}` });
  await hook.getByRole('table', { name: `Delivery log of ${hookURL}, newest first` }).getByText('Note CREATED').waitFor();
  await hook.getByRole('button', { name: `Send test event to ${hookURL}` }).click();
  await page.getByText(/Test event evt_test_\S+ delivered to .*: status 200/).waitFor();

  // The schedule, read with the admin token alone: last and next run.
  const row = page.getByRole('table', { name: 'Scheduled functions of react.test' }).getByRole('row', { name: /Mutation\.tick/ });
  await row.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();
  await row.getByRole('cell', { name: '1 × MINUTE', exact: true }).waitFor();
  console.log(`schedule: ${await row.innerText()}`);
} catch (e) {
  failures.push(`${e.message}`);
  if (page) failures.push('the page showed: ' + (await page.locator('main').innerText().catch(() => '?')));
} finally {
  await browser.close();
}
finish(failures);
