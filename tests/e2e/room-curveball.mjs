// Curveballs from the sandbox's Faults group: each button throws its fault
// into the running run at the current moment. The clock does not go back
// (no restart), the fault's counter rises after it, the page's link then
// carries the fault, and that link replays the same run: the same numbers
// as stampede-sim --url for it. Two are thrown into one run: the origin
// failing, then a deploy that synchronises every key's TTL (ttl-sync).

import { execFileSync } from "node:child_process";
import path from "node:path";
import { spec, root, metric } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simulate = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));
const search = (page) => new URL(page.url()).search.slice(1);

await spec("room-curveball", async (t) => {
  const { page } = t;
  // Steady traffic over 200 keys with jittered TTLs and both layers.
  await t.open("preset=jitter&c=inner&i=6&t=30&seed=2");
  const group = page.locator('[data-group="faults"]');
  await group.locator("summary").click();
  const balls = group.locator("[data-curveball]");
  const kinds = await balls.evaluateAll((bs) => bs.map((b) => b.dataset.curveball));
  for (const k of ["redis", "redis-hang", "holder", "origin", "ttl-sync"]) {
    if (!kinds.includes(k)) throw new Error(`the Faults group has no ${k} curveball: ${kinds.join(", ")}`);
  }
  t.ok(`the Faults group offers ${kinds.length} curveballs: ${kinds.join(", ")}`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await group.scrollIntoViewIfNeeded();
  await group.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "faults-curveballs-1280x800.png") });
  await page.setViewportSize({ width: 390, height: 844 });
  await group.scrollIntoViewIfNeeded();
  await group.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "faults-curveballs-390x844.png") });
  await page.setViewportSize({ width: 1280, height: 800 });
  const quiet = simulate(search(page));

  // Pauses, moves the clock to `past` on the timeline, throws `kind`;
  // returns the moment it landed. (Playing there instead, a loaded machine
  // let the run reach its end before the second throw.)
  const throwAt = async (kind, past, pattern) => {
    const play = page.locator('[data-control="play"]');
    if ((await play.getAttribute("aria-pressed")) === "true") await play.click();
    await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false");
    await page.locator('[data-control="timeline"]').fill(String(past));
    await page.waitForFunction(([sel, ms]) => Number(document.querySelector(sel)?.textContent) >= ms, [metric("now_ms"), past], { timeout: 60_000 });
    const before = await t.number("now_ms");
    await group.locator(`[data-curveball="${kind}"]`).click();
    const status = async () => (await group.locator("[data-curveball-status]").textContent()).trim();
    try {
      await page.waitForFunction((re) => new RegExp(re).test(decodeURIComponent(location.search.slice(1))), pattern, { timeout: 10_000 });
    } catch {
      throw new Error(`${kind}: the link is ${search(page)} (status: ${await status()})`);
    }
    const said = await status();
    if (!/without a restart/.test(said)) throw new Error(`${kind}: the status says ${JSON.stringify(said)}`);
    const after = await t.number("now_ms");
    if (after < before) throw new Error(`${kind}: the clock went back: ${before} -> ${after}`);
    t.ok(`${kind} lands at ${before} ms without a restart (clock ${after} ms): ${said}`);
    return before;
  };
  const first = await throwAt("origin", 2500, "(^|&)f=origin@\\d+\\+2000(&|$)");
  await throwAt("ttl-sync", first + 1500, "(^|&)f=origin@\\d+\\+2000,ttl-sync@\\d+(&|$)");
  // It says when the wave comes: one TTL (vt=5000 here) after the deploy.
  const at = Number(/ttl-sync@(\d+)/.exec(decodeURIComponent(search(page)))[1]);
  const said = await group.locator("[data-curveball-status]").textContent();
  if (!said.includes(`The deploy set every key holding a value to expire at ${at + 5000} ms.`)) throw new Error(`the status: ${said}`);
  t.ok(`the deploy's status says when the keys expire together (${at + 5000} ms)`);
  await group.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "faults-curveballs-thrown-1280x800.png") });
  const link = search(page);
  await page.keyboard.press("End");
  await t.untilEnd(120_000);
  const failures = await t.number("origin_failures");
  if (!(failures > quiet.origin_failures)) throw new Error(`origin_failures ${quiet.origin_failures} -> ${failures}`);
  const peak = await t.number("origin_peak_concurrency");
  if (!(peak > quiet.origin_peak_concurrency)) {
    throw new Error(`origin_peak_concurrency ${quiet.origin_peak_concurrency} -> ${peak}`);
  }
  t.ok(`the counters rise: origin_failures ${quiet.origin_failures} -> ${failures}, origin_peak_concurrency ${quiet.origin_peak_concurrency} -> ${peak}`);
  const want = simulate(link);
  for (const m of ["origin_failures", "origin_peak_concurrency", "recomputes", "claim_attempts"]) {
    await t.expectMetric(m, String(want[m]), `the link ${link} replays the run`);
  }
  // The link opened afresh gives the same run too.
  await t.open(`${link}&speed=1000`);
  await page.keyboard.press("End");
  await t.untilEnd(120_000);
  for (const m of ["origin_peak_concurrency", "recomputes"]) {
    await t.expectMetric(m, String(want[m]), "the link opened anew");
  }
  t.noProblems("the sandbox's curveballs");
});
