// An instance's mail in the console: run by console/mail_e2e_test.go
// against a real server with instance mail.test and a real SMTP sink
// (internal/mailtest). node mail.mjs, with CORE_URL, CORE_ADMIN_TOKEN,
// SMTP_HOST, SMTP_PORT, SMTP_PASSWORD and CHROMIUM.
//
// From the instances list to the instance's mail view: set the mail
// server (the password typed, then shown only as kept), preview a
// template and save it, send a test message and see it sent in the
// outbox. It waits for elements, never for a fixed time, and prints "ok"
// at the end.
import { finish, launch, need, signIn } from './browser.mjs';

const base = need('CORE_URL');
const adminToken = need('CORE_ADMIN_TOKEN');
const smtpHost = need('SMTP_HOST');
const smtpPort = need('SMTP_PORT');
const smtpPassword = need('SMTP_PASSWORD');

const failures = [];
function expect(cond, message) { if (!cond) failures.push(message); }

const browser = await launch();
let page;
try {
  page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15000);
  await signIn(page, base, adminToken);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Instances' }).click();
  await page.getByRole('link', { name: 'Mail of mail.test' }).click();
  await page.getByRole('heading', { name: 'Mail of mail.test', level: 1 }).waitFor();

  // The mail server, its password typed once.
  await page.getByLabel('SMTP host').fill(smtpHost);
  await page.getByLabel('SMTP port').fill(smtpPort);
  await page.getByLabel('TLS').selectOption('none');
  // No username: the sink takes mail without AUTH; the password is kept
  // all the same, and must never be shown.
  await page.getByLabel('SMTP password').fill(smtpPassword);
  await page.getByLabel('From').fill('Notes <notes@example.com>');
  await page.getByRole('button', { name: 'Save mail server' }).click();
  await page.getByText('Saved the mail server of mail.test.').waitFor();
  await page.getByText('A password is kept (never shown)').waitFor();
  expect(await page.getByLabel('SMTP password').inputValue() === '', 'the password field still holds the password after saving');

  // Opened again, the view shows the settings and never the password.
  await page.reload();
  await page.getByRole('heading', { name: 'Mail of mail.test', level: 1 }).waitFor();
  await page.getByText('A password is kept (never shown)').waitFor();
  expect(await page.getByLabel('SMTP host').inputValue() === smtpHost, 'the host was not kept');
  expect(await page.getByLabel('SMTP password').inputValue() === '', 'the password field is filled on a new view');
  expect(!(await page.content()).includes(smtpPassword), 'the page holds the smtp password');

  // A template, previewed by the server, then saved; a broken one is
  // refused naming the problem.
  await page.getByLabel('Template of', { exact: true }).selectOption('passwordReset');
  await page.getByLabel('Subject', { exact: true }).fill('{{.Code');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByText(/No preview: .*mailTemplates\.passwordReset/).waitFor();
  await page.getByLabel('Subject', { exact: true }).fill('Code for {{.App}}: {{.Code}}');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByLabel('Preview').getByText('Code for notes: SAMPLE-CODE').waitFor();
  await page.getByRole('button', { name: 'Save template' }).click();
  await page.getByText('Saved the template of passwordReset.').waitFor();

  // A test message, delivered to the sink, is shown sent in the outbox.
  await page.getByLabel('Send a test message to').fill('ops@example.com');
  await page.getByRole('button', { name: 'Send test message' }).click();
  const queued = await page.getByText(/Queued test message (\S+):/).textContent();
  const id = /Queued test message (\S+):/.exec(queued)[1];
  const row = page.getByRole('row', { name: new RegExp(id) });
  await row.getByRole('cell', { name: 'sent', exact: true }).waitFor({ timeout: 60000 });
  console.log(`test message ${id}: ${await row.innerText()}`);
} catch (e) {
  failures.push(`${e.message}`);
  if (page) failures.push('the page showed: ' + (await page.locator('main').innerText().catch(() => '?')));
} finally {
  await browser.close();
}

finish(failures);
