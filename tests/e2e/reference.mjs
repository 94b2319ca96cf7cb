// The static reference under the page: the interview questions (answers
// hidden until opened; every answer's scenario link loads without a banner
// and shows the number its words point at), the real-systems table (a page
// of its own, linked from the reference; every row cites its source), and the printable summary (its numbers are the
// simulation's; printing shows the summary and the answers, not the lab).
import { execFileSync } from "node:child_process";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const sim = (args) => JSON.parse(execFileSync(cli, [...args, "--json"], { encoding: "utf8" }));

async function load(page, href) {
  await page.goto(href, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame || document.querySelector(".ab-side"), null, {
    timeout: 30_000,
  });
}

await spec("reference", async (t) => {
  const { page } = t;
  await t.open();

  const questions = page.locator("[data-question]");
  const n = await questions.count();
  if (n < 12) throw new Error(`${n} questions, want at least 12`);
  const links = [];
  for (let i = 0; i < n; i++) {
    const q = questions.nth(i);
    const answer = q.locator(".answer");
    if (await answer.isVisible()) throw new Error(`question ${i + 1}: the answer shows before it is opened`);
    await q.locator("summary").click();
    if (!(await answer.isVisible())) throw new Error(`question ${i + 1}: opening it does not show the answer`);
    for (const a of await q.locator("a[data-expect-metric]").all()) {
      links.push({
        q: await q.getAttribute("data-question"),
        href: new URL(await a.getAttribute("href"), page.url()).href,
        metric: await a.getAttribute("data-expect-metric"),
        side: await a.getAttribute("data-expect-side"),
        want: await a.getAttribute("data-expect"),
      });
    }
    if ((await q.locator("a[data-expect-metric]").count()) === 0) throw new Error(`question ${i + 1} links no scenario`);
  }
  t.ok(`${n} questions, each answer hidden until opened and linking a scenario`);

  for (const l of links) {
    await load(page, l.href);
    if (await page.locator(".banner").count()) {
      throw new Error(`question ${l.q}: ${l.href} shows a banner: ${await page.locator(".banner").textContent()}`);
    }
    const sel = l.side ? `[data-side="${l.side}"] [data-metric="${l.metric}"]` : `[data-metric="${l.metric}"]`;
    if (l.side) await page.locator(control("compare-end")).click();
    else await page.keyboard.press("End");
    const ok = (v) => (l.want.startsWith(">") ? Number(v) > Number(l.want.slice(1)) : v === l.want);
    try {
      await page.waitForFunction(
        ([sel, want]) => {
          const v = document.querySelector(sel)?.textContent.trim();
          return v !== undefined && (want.startsWith(">") ? Number(v) > Number(want.slice(1)) : v === want);
        },
        [sel, l.want],
        { timeout: 60_000 },
      );
    } catch {
      throw new Error(`question ${l.q}: ${l.href} shows ${l.metric} = ${await page.locator(sel).first().textContent()}, the answer says ${l.want}`);
    }
    const shown = (await page.locator(sel).first().textContent()).trim();
    if (!ok(shown)) throw new Error(`question ${l.q}: ${shown}`);
    t.ok(`question ${l.q}: ${new URL(l.href).search} loads without a banner; ${l.side ? `side ${l.side} ` : ""}${l.metric} = ${shown} (${l.want})`);
  }

  // The table is a page of its own, linked from the reference (a first
  // visit does not load it).
  await t.open();
  const realLink = page.locator("#real-systems a[data-real-systems]");
  if ((await realLink.getAttribute("href")) !== "real-systems.html") throw new Error(`the reference links the table at ${await realLink.getAttribute("href")}`);
  if (await page.locator("table.real").count()) throw new Error("the page itself carries the real-systems table");
  await realLink.click();
  await page.waitForURL(/real-systems\.html$/);
  await page.waitForSelector("table.real");
  if ((await page.locator('link[rel=stylesheet]').count()) !== 1) throw new Error("the table's page is not styled by the page's one stylesheet");
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (!bg || bg === "rgba(0, 0, 0, 0)") throw new Error("the table's page has no background: its stylesheet did not load");
  await page.locator(".back-to-lab a").click();
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.goBack();
  await page.waitForSelector("table.real");
  t.ok("the reference links the real-systems table's own page, styled, with the way back");
  const rows = page.locator("table.real tbody tr");
  const r = await rows.count();
  if (r < 20) throw new Error(`${r} real-systems rows, want at least 20`);
  for (let i = 0; i < r; i++) {
    const href = await rows.nth(i).locator("td:last-child a").getAttribute("href");
    if (!href?.startsWith("https://")) throw new Error(`row ${i + 1} cites no source: ${href}`);
  }
  const systems = await page.locator("table.real tbody th").allTextContents();
  for (const s of ["NGINX", "Varnish", "memcache", "Caffeine", "groupcache", "moka", "Cloudflare", "CloudFront", "Redis"]) {
    if (!systems.some((x) => x.includes(s))) throw new Error(`the real-systems table has no ${s}`);
  }
  t.ok(`${r} real-systems rows, each citing its source; NGINX, Varnish, memcache, Caffeine, groupcache, moka, CDNs, Redis`);
  await page.locator("#real-systems").screenshot({ path: new URL("./screenshots/real-systems-desktop.png", import.meta.url).pathname });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) throw new Error(`phone: the reference overflows by ${overflow}px`);
  await page.locator("#real-systems").screenshot({ path: new URL("./screenshots/real-systems-phone.png", import.meta.url).pathname });
  await page.setViewportSize({ width: 1280, height: 800 });
  t.ok("the real-systems table at 1280 and 390 wide: nothing overflows the page (the table scrolls in its box)");

  // The summary's numbers are the simulation's.
  await t.open();
  const naive = sim(["--preset", "naive"]).recomputes;
  const single = sim(["--preset", "singleflight"]).recomputes;
  const both = sim(["--preset", "burst"]);
  const summary = await page.locator("#summary").textContent();
  const fmt = (x) => x.toLocaleString("en-US");
  for (const want of [`40 × 200 = ${fmt(naive)}`, `(${single})`, `${both.recomputes === 1 ? "one recompute" : both.recomputes} and only ${both.claim_attempts} claim attempts`]) {
    if (!summary.includes(want)) throw new Error(`the summary should say "${want}"`);
  }
  t.ok(`the summary's arithmetic is the simulation's (${naive}, ${single}, ${both.recomputes} with ${both.claim_attempts} claim attempts)`);

  await page.locator(control("questions")).click();
  await page.waitForFunction(() => location.hash === "#questions" || window.scrollY > 500);
  t.ok("the questions control leads to the questions");

  await page.emulateMedia({ media: "print" });
  if (await page.locator("#lab").isVisible()) throw new Error("printing shows the lab");
  if (!(await page.locator("#summary").isVisible())) throw new Error("printing hides the summary");
  if (!(await page.locator("[data-question] .answer").first().isVisible())) throw new Error("printing hides the answers");
  await t.shot("print.png", { fullPage: true });
  await page.emulateMedia({ media: "screen" });
  t.ok("printed: the summary and every answer, no lab");

  // Start-up keeps the reference out of the first layouts
  // (content-visibility: hidden until the page has started); once started
  // it is rendered when scrolled near, and without scripting it reads from
  // the top of the page as before.
  const started = await page.evaluate(() => [
    document.documentElement.dataset.started !== undefined,
    getComputedStyle(document.querySelector(".reference")).contentVisibility,
  ]);
  if (!started[0] || started[1] !== "auto") throw new Error(`started: ${started}, want the reference at content-visibility: auto`);
  const plain = await page.context().newPage();
  const cdp = await page.context().newCDPSession(plain);
  await cdp.send("Emulation.setScriptExecutionDisabled", { value: true });
  await plain.goto(page.url().split(/[?#]/)[0], { waitUntil: "load" });
  const [scripting, top, cv, shown] = await plain.evaluate(() => [
    matchMedia("(scripting: enabled)").matches,
    document.querySelector(".reference").getBoundingClientRect().top,
    getComputedStyle(document.querySelector(".reference")).contentVisibility,
    document.querySelector("#questions summary")?.getBoundingClientRect().height ?? 0,
  ]);
  if (scripting) throw new Error("the page without scripting still matches (scripting: enabled)");
  if (top > 100 || cv !== "auto" || shown <= 0) throw new Error(`without scripting the reference should read from the top: top ${top}, content-visibility ${cv}, first question ${shown}px tall`);
  await plain.close();
  t.ok(`the reference: rendered once the page has started; without scripting, at the top of the page (${Math.round(top)}px)`);
  t.noProblems("at the end");
});
