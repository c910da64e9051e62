// Browser checks of convoy's HTML page: Debian's chromium, headless, driven by
// playwright-core. Each check in a fresh browser context of its own:
//
//   node check.mjs sections PAGE [--screenshot PNG]   every section drawn, no console error
//   node check.mjs single PAGE                         a one-profile page says what it lacks
//   node check.mjs sort PAGE                           the lock table sorts and filters
//   node check.mjs hostile PAGE NAME...                each NAME shows as text, nothing runs
//   node check.mjs diff PAGE                           a diff page draws both sides
//   node check.mjs optional PAGE                       the cache-line map and lock-order graph,
//                                                      given data (today's analyzer has none)
//   node check.mjs serve SOCKET                        starts one chromium and runs the checks
//                                                      asked of it on the unix socket SOCKET
//                                                      (below) until its standard input ends
//
// A check run by hand starts a chromium of its own. test_viewer runs one
// `serve` for all its tests and asks it for each check: a chromium's start,
// node's and playwright's, and the relay of every protocol message through
// a second node process (a check connected to a chromium server) were most
// of a check's CPU time. A request is one line, the JSON array
// [CHECK, PAGE, ARGS...]; the answer one line, {"code": C, "out": TEXT},
// and the connection's end. A connection ended with no answer means the
// server's chromium is gone: the asker runs the check itself.
//
// Exit (or code) 0: passed; 1: failed (why in the text); 77: skipped
// (chromium or playwright-core missing or unable to start; the reason in the
// text).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// For runs by hand: test_viewer passes no CONVOY_* variable.
const CHROMIUM = process.env.CONVOY_CHROMIUM || '/usr/bin/chromium';
const SKIP = 77;

class CheckFailed extends Error {}
function fail(msg) { throw new CheckFailed(msg); }
function check(cond, msg) { if (!cond) fail(msg); }

// The cache-line map and the lock-order graph drawn from data added to a copy
// of the page (with a hostile name among it), as the page's own JSON escapes it.
const HOSTILE = '<img src=x onerror=alert(3)>';
function withOptionalSections(path) {
  const html = readFileSync(path, 'utf8');
  const open = '<script type="application/json" id="convoy-data">';
  const start = html.indexOf(open) + open.length, end = html.indexOf('</script>', start);
  const data = JSON.parse(html.slice(start, end));
  const report = data.kind === 'sweep' ? data.reports[data.reports.length - 1].report : data.report;
  report.lock_order = { edges: [{ from: 'a', to: 'b', count: 3 }, { from: 'b', to: HOSTILE, count: 1 }, { from: HOSTILE, to: 'a', count: 2 }, { from: 'a', to: 'c', count: 1 }],
    cycles: [['a', 'b', HOSTILE]] };
  report.cache_lines = [{ addr: '0x1000', objects: ['a', HOSTILE] }, { addr: '0x1040', objects: ['c'] }];
  const json = JSON.stringify(data).replace(/[<>&\u2028\u2029]/g, c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const out = path + '.optional.html';
  writeFileSync(out, html.slice(0, start) + json + html.slice(end));
  return out;
}
const pwPath = join(here, 'node_modules', 'playwright-core', 'index.mjs');
const launchOptions = { executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'], timeout: 60000 };

// A chromium; where there is none, exits 77 saying why.
async function startChromium() {
  let why;
  if (!existsSync(pwPath))
    why = `playwright-core is not installed (${pwPath}); run 'make deps' or 'npm ci' in tests/viewer`;
  else if (!existsSync(CHROMIUM))
    why = `no chromium at ${CHROMIUM} (apt-get install chromium, or 'make deps')`;
  else {
    const { chromium } = await import(pathToFileURL(pwPath).href);
    try {
      return await chromium.launch(launchOptions);
    } catch (e) {
      why = 'chromium cannot start: ' + String(e.message).split('\n')[0];
    }
  }
  console.log('SKIP: ' + why);
  process.exit(SKIP);
}

// What is wrong with a check's arguments, found before any chromium: a
// reason to fail with, or null.
function badArguments(what, given) {
  if (!what || !given) return 'FAIL: usage: node check.mjs CHECK PAGE [ARGS] | serve SOCKET';
  if (what !== 'serve' && !existsSync(given)) return `FAIL: no page at ${given}`;
  return null;
}

// Runs check `what` of page `given` in a context of its own: resolves to
// { code, out }.
async function runCheck(browser, what, given, rest) {
  const bad = badArguments(what, given);
  if (bad) return { code: 1, out: bad };
  let ctx;
  try {
    ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = what === 'optional' ? withOptionalSections(given) : given;
    await checkPage(ctx, what, page, rest);
    return { code: 0, out: `ok ${what} ${page}` };
  } catch (e) {
    return { code: 1, out: 'FAIL: ' + (e instanceof CheckFailed ? e.message : String(e.stack || e)) };
  } finally {
    await ctx?.close().catch(() => {});
  }
}

async function checkPage(ctx, what, page, rest) {
  const problems = [], dialogs = [];
  const tab = await ctx.newPage();
  tab.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  tab.on('pageerror', e => problems.push('page error: ' + e.message));
  tab.on('dialog', d => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  tab.on('request', r => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) problems.push('network request: ' + r.url()); });
  await tab.goto(pathToFileURL(page).href);
  await tab.waitForSelector('body[data-rendered]', { timeout: 20000 }).catch(() => fail('the page never finished drawing: ' + problems.join('; ')));

  async function sectionText(id) {
    const s = tab.locator('#' + id);
    check(await s.count() === 1, `no section #${id}`);
    const text = (await s.innerText()).trim();
    check(text.split('\n').length > 1, `section #${id} is empty`);
    return text;
  }
  const data = await tab.evaluate(() => JSON.parse(document.getElementById('convoy-data').textContent));

  if (what === 'sections') {
    check(data.kind === 'sweep', `expected a sweep page, got ${data.kind}`);
    const verdict = await sectionText('verdict');
    for (const step of data.sweep.steps.filter(Boolean))
      check(verdict.includes(step), `the verdict lacks the step sentence "${step}"`);
    await sectionText('speedup');
    check(await tab.locator('#speedup svg path.measured').count() === 1, 'no measured speedup curve');
    check(await tab.locator('#speedup svg path.ideal').count() === 1, 'no ideal line');
    check(await tab.locator('#speedup svg circle').count() === data.sweep.runs.length, 'not one point per thread count');
    await sectionText('stack');
    check(await tab.locator('#stack svg rect').count() >= data.sweep.runs.length, 'no stacked bars');
    const findings = await sectionText('findings');
    for (const f of data.sweep.findings) check(findings.includes(f.summary), `finding missing: ${f.summary}`);
    const last = data.reports[data.reports.length - 1].report;
    await sectionText('locks');
    check(await tab.locator('#locks tbody tr.expander').count() === last.locks.length, 'not one row per lock');
    await sectionText('sync');
    for (const id of ['cachelines', 'lockorder', 'timeline']) {
      const text = await sectionText(id);
      const has = { cachelines: last.cache_lines || (last.cpu_samples && last.cpu_samples.cache_lines),
                    lockorder: last.lock_order, timeline: last.trace }[id];
      if (!has) check(/not measured in this profile|No trace in this profile/i.test(text), `#${id} does not say that it was not measured`);
    }
    check(await tab.locator('#timeline svg g.lane').count() === Math.min(last.threads.length, 64), 'not one timeline lane per thread');
    await sectionText('threads');
    // Another thread count redraws the details.
    if (data.reports.length > 1) {
      await tab.selectOption('#run-select', '0');
      check(await tab.locator('#locks tbody tr.expander').count() === data.reports[0].report.locks.length, 'choosing 1 thread did not redraw the lock table');
      await tab.selectOption('#run-select', String(data.reports.length - 1));
    }
    const shot = rest.indexOf('--screenshot');
    if (shot >= 0)
      await tab.screenshot({ path: rest[shot + 1], fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1180 } });
  } else if (what === 'single') {
    check(data.kind === 'report', `expected a one-profile page, got ${data.kind}`);
    await sectionText('verdict');
    check(/Not measured in this profile/.test(await sectionText('speedup')), 'the speedup section does not say a sweep is needed');
    for (const id of ['stack', 'findings', 'locks', 'sync', 'cachelines', 'lockorder', 'timeline', 'threads']) await sectionText(id);
  } else if (what === 'sort') {
    const report = data.kind === 'sweep' ? data.reports[data.reports.length - 1].report : data.report;
    check(report.locks.length >= 2, 'the page needs two locks to sort');
    const names = async () => tab.locator('#locks tbody tr.expander td:first-child').allInnerTexts();
    // A column's numbers, row by row, as the cells carry them (data-value).
    const column = async label => {
      const heads = await tab.locator('#locks th').allInnerTexts();
      const i = heads.findIndex(h => h.replace(/[▲▼]/g, '').trim() === label);
      check(i >= 0, `no column ${label}`);
      return (await tab.locator(`#locks tbody tr.expander td:nth-child(${i + 1})`).evaluateAll(tds => tds.map(td => Number(td.dataset.value))));
    };
    const sorted = (v, desc) => v.every((x, i) => i === 0 || (desc ? v[i - 1] >= x : v[i - 1] <= x));
    const head = tab.locator('#locks th', { hasText: /^wait$/ });
    // Opened sorted by wait, longest first.
    check((await head.getAttribute('aria-sort')) === 'descending', 'the lock table does not open sorted by wait');
    const waits = await column('wait');
    check(waits.length === report.locks.length, 'not one row per lock');
    check(sorted(waits, true), `waits not longest first: ${waits}`);
    check(waits[0] === Math.max(...report.locks.map(l => l.wait_ns)), 'the first row is not the longest wait');
    await head.click();
    check((await head.getAttribute('aria-sort')) === 'ascending', 'a second click does not sort ascending');
    check(sorted(await column('wait'), false), 'a second click does not sort waits shortest first');
    await tab.locator('#locks th', { hasText: /^acquisitions$/ }).click();
    check(sorted(await column('acquisitions'), true), 'sorting by acquisitions does not put the most acquired first');
    // Filtering by a lock's name keeps that lock.
    const target = report.locks[0].name;
    await tab.fill('#locks input[type=search]', target);
    const left = await names();
    check(left.length >= 1 && left.every(n => n.includes(target)), `filtering by "${target}" left ${JSON.stringify(left)}`);
    await tab.fill('#locks input[type=search]', 'no lock is called this');
    check((await names()).length === 0, 'a filter that matches nothing still shows rows');
    // A row opens to its call stacks.
    await tab.fill('#locks input[type=search]', '');
    await tab.locator('#locks tbody tr.expander').first().click();
    check(await tab.locator('#locks tr.detail:not([hidden])').count() === 1, 'clicking a row does not open its details');
  } else if (what === 'hostile') {
    check(rest.length > 0, 'name the hostile strings');
    const text = await tab.locator('main').innerText();
    for (const name of rest) check(text.includes(name), `the page does not show ${JSON.stringify(name)} as text`);
    // Let an image error or a script run if one were injected.
    await tab.waitForTimeout(300);
    check(dialogs.length === 0, 'a dialog opened: ' + dialogs.join(', '));
    const injected = await tab.evaluate(() => ({
      imgs: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
    }));
    check(injected.imgs === 0, `${injected.imgs} <img> elements were created from data`);
    check(injected.scripts === 2, `the page has ${injected.scripts} <script> elements, not its own 2`);
    check(injected.handlers === 0, `${injected.handlers} elements carry on* attributes`);
  } else if (what === 'diff') {
    check(data.kind === 'diff', `expected a diff page, got ${data.kind}`);
    const verdict = await sectionText('verdict');
    check(verdict.includes('B takes'), 'the comparison has no wall-time sentence');
    await sectionText('stack');
    if (data.a.kind === 'sweep') {
      check(await tab.locator('#speedup svg path.measured').count() === 1 && await tab.locator('#speedup svg path.measured-b').count() === 1,
        'a diff of two sweeps does not draw both speedup curves');
      check(/speedup/.test(verdict), 'the comparison has no speedup per thread count');
    }
    await sectionText('differences');
    check(await tab.locator('#differences tbody tr').count() === data.diff.differences.filter(r => r.a_ns || r.b_ns).length,
      'not one row per difference that is not zero on both sides');
    await sectionText('findings');
    await sectionText('findings-b');
    for (const side of await tab.locator('details.side > summary').all()) await side.click();
    await sectionText('a-locks');
    await sectionText('b-locks');
  } else if (what === 'optional') {
    const graph = await sectionText('lockorder');
    check(/1 lock-order cycle/.test(graph), 'the lock-order cycle is not named');
    check(await tab.locator('#lockorder svg circle').count() === 4, 'not one node per lock in the graph');
    check(await tab.locator('#lockorder svg line').count() === 4, 'not one arrow per edge');
    check(graph.includes(HOSTILE), 'the hostile lock name is not shown as text in the graph');
    const lines = await sectionText('cachelines');
    check(await tab.locator('#cachelines tbody tr').count() === 2, 'not one row per cache line');
    check(lines.includes(HOSTILE), 'the hostile name is not shown as text in the cache-line map');
    check(dialogs.length === 0 && await tab.locator('img').count() === 0, 'a name from the data ran or made an element');
  } else {
    fail('unknown check ' + what);
  }
  check(problems.length === 0, problems.join('; '));
}

const [what, given, ...rest] = process.argv.slice(2);
const bad = badArguments(what, given);
if (bad) {
  console.error(bad);
  process.exit(1);
}
const browser = await startChromium();
if (what === 'serve') {
  // The checks asked on the socket, each answered on its connection;
  // chromium closed and the socket removed when standard input ends (the
  // test run's end, however it ends).
  process.on('unhandledRejection', e => console.error('check.mjs serve: ' + (e && e.stack || e)));
  const server = createServer(conn => {
    let request = '';
    conn.setEncoding('utf8');
    conn.on('error', () => {});   // an asker gone: its answer is dropped
    conn.on('data', async chunk => {
      if (request === null) return;   // the request is in: nothing more is read
      request += chunk;
      const nl = request.indexOf('\n');
      if (nl < 0) return;
      const line = request.slice(0, nl);
      request = null;
      let answer;
      try {
        const [w, page, ...args] = JSON.parse(line);
        answer = await runCheck(browser, w, page, args);
      } catch (e) {
        answer = { code: 1, out: 'FAIL: a request that is not a JSON array of strings: ' + e.message };
      }
      if (!browser.isConnected())
        conn.destroy();   // no answer: chromium is gone, the asker runs the check itself
      else
        conn.end(JSON.stringify(answer) + '\n');
    });
  });
  server.listen(given, () => console.log('ready'));
  const close = () => {
    server.close();
    rmSync(given, { force: true });
    browser.close().finally(() => process.exit(0));
  };
  process.stdin.on('end', close).on('error', close).resume();
} else {
  const { code, out } = await runCheck(browser, what, given, rest);
  await browser.close();
  (code === 0 ? console.log : console.error)(out);
  process.exit(code);
}
