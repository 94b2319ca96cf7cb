// Curveballs always bite: each of the kit's curveballs, thrown into the
// card's run (one burst, 40 × 200) after it has ended, either bites (the
// run restarts with the fault at the latest earlier moment it finds work,
// and the fault's counter ends higher than without it) or is refused with
// its reason in [data-kit-status] (data-refused) and a one-click way to
// make it bite, which does. The kit's words are the candidate window's own
// report (its `thrown` or `refused`). In the A/B view a curveball lands in
// both runs at the A/B clock's moment, never in the run behind the view.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { pairKit } from "./lib/kit.mjs";
import { spec, root, baseUrl, metric } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simulate = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));
const search = (page) => new URL(page.url()).search.slice(1);

await spec("kit-curveballs", async (t) => {
  const { page } = t;
  await t.open("seed=1");
  const { kit, code } = await pairKit(t);
  t.ok(`the kit is paired with the candidate's window ${code}`);
  const kinds = await kit.locator("[data-curveball]").evaluateAll((bs) => bs.map((b) => b.dataset.curveball));
  const metricOf = { redis: "redis_errors", "redis-hang": "redis_errors", holder: "crashed", origin: "origin_failures", "origin-hang": "timeouts", "ttl-sync": "origin_peak_concurrency" };
  const quiet = simulate("seed=1");
  let bitten = 0;
  let refused = 0;
  for (const kind of kinds) {
    const m = metricOf[kind];
    if (!m) throw new Error(`no counter known for the curveball ${kind}`);
    // The card's run, played to its end (the page keeps its code on a reload).
    await t.open("seed=1");
    await page.keyboard.press("End");
    await t.untilEnd(120_000);
    await page.waitForFunction(([sel, end]) => Number(document.querySelector(sel)?.textContent) >= end, [metric("now_ms"), Math.floor(quiet.elapsed_ms)], { timeout: 60_000 });
    await t.expectMetric("recomputes", String(quiet.recomputes), `${kind}: the card's run has ended`, 60_000);
    const end = await t.number("now_ms");
    // The link's name of the fault (Redis hanging is Redis down, hanging).
    const fault = kind === "redis-hang" ? "redis" : kind;
    await kit.locator(`[data-curveball="${kind}"]`).click();
    await kit.waitForFunction(
      () => {
        const s = document.querySelector("[data-kit-status]");
        return s?.hasAttribute("data-refused") || s?.textContent.startsWith("Thrown");
      },
      null,
      { timeout: 60_000 },
    );
    const said = (await kit.locator("[data-kit-status]").textContent()).trim();
    const why = await kit.locator("[data-kit-status]").getAttribute("data-refused");
    if (why === null) {
      // It bit: the link carries the fault, and the run it replays ends with
      // the fault's counter above the quiet run's.
      const re = new RegExp(`(^|&)f=${fault}(%40|@)\\d+`);
      await page.waitForFunction((src) => new RegExp(src).test(location.search.slice(1)), re.source, { timeout: 10_000 });
      const link = search(page);
      const want = simulate(link);
      if (!(want[m] > quiet[m])) throw new Error(`${kind}: the link ${link} gives ${m} ${want[m]}, quiet ${quiet[m]}`);
      if (!/restarted with the fault at \d+ ms|lands at|landed at/.test(said)) throw new Error(`${kind}: the kit says ${said}`);
      await page.keyboard.press("End");
      await t.untilEnd(120_000);
      await t.expectMetric(m, String(want[m]), `${kind} thrown after the end (${end} ms) bites: ${m} ${quiet[m]} -> ${want[m]}; the kit: ${said}`, 60_000);
      bitten += 1;
    } else {
      if (why !== kind) throw new Error(`${kind}: data-refused="${why}"`);
      if (!/^Not thrown: .*nothing for it/.test(said)) throw new Error(`${kind}: refused without its reason: ${said}`);
      if (/(^|&)f=/.test(search(page))) throw new Error(`${kind}: refused, yet the link carries a fault: ${search(page)}`);
      const fix = kit.locator("[data-kit-status] [data-fix]");
      await fix.click();
      const re = new RegExp(`(^|&)f=${fault}(%40|@)\\d+`);
      await page.waitForFunction((src) => new RegExp(src).test(location.search.slice(1)), re.source, { timeout: 20_000 });
      const link = search(page);
      const want = simulate(link);
      const base = simulate(link.replace(/(^|&)f=[^&]*/, ""));
      if (!(want[m] > base[m])) throw new Error(`${kind}: the fix ${link} gives ${m} ${want[m]}, without the fault ${base[m]}`);
      await page.keyboard.press("End");
      await t.untilEnd(120_000);
      await t.expectMetric(m, String(want[m]), `${kind} is refused after the end ("${said}"), and its one click bites: ${m} ${base[m]} -> ${want[m]} on ?${link}`, 60_000);
      refused += 1;
    }
  }
  t.ok(`${bitten} curveballs bit the ended run, ${refused} were refused with their reason and a fix that bites`);

  // The A/B view: its two runs are not the sandbox's. The kit's curveball
  // lands in both at the A/B clock's moment (compare::throw), and nothing
  // is thrown into the run behind the view (the link used to record
  // f=holder@1). Paused mid-run, so the moment is the clock's.
  await page.goto(`${baseUrl}?cmp=layered&seed=1`, { waitUntil: "load" });
  await page.locator(".ab-main").waitFor({ timeout: 30_000 });
  await kit.locator('[data-pair-alive="1"]').waitFor({ timeout: 10_000 });
  const throwAb = async (kind) => {
    const before = (await kit.locator("[data-kit-status]").textContent()).trim();
    await kit.locator(`[data-curveball="${kind}"]`).click();
    try {
      await kit.waitForFunction(
        ([k, was]) => {
          const s = document.querySelector("[data-kit-status]");
          const text = s?.textContent.trim() ?? "";
          return text !== was && (s?.getAttribute("data-refused") === k || text.startsWith("Thrown"));
        },
        [kind, before],
        { timeout: 20_000 },
      );
    } catch {
      throw new Error(`${kind} in the A/B view: the kit says ${(await kit.locator("[data-kit-status]").textContent()).trim()}`);
    }
    return [(await kit.locator("[data-kit-status]").textContent()).trim(), await kit.locator("[data-kit-status]").getAttribute("data-refused")];
  };
  // Every recompute has started by now (or, on a slow machine, is about
  // to): an origin failure with nothing left to take ahead restarts both
  // runs with it at an earlier moment where it finds work (as the
  // single-run view does; issue 40 defect 8, it was refused), and the link
  // carries it.
  const [late, lateWhy] = await throwAb("origin");
  if (lateWhy !== null || !/^Thrown: origin: (the run had nothing left for it after \d+ ms, so it restarted with the fault at|it landed at) \d+ ms/.test(late)) throw new Error(`the A/B view's late origin curveball: ${late}`);
  await page.waitForFunction(() => /(^|&)throw=origin(%40|@)\d+/.test(location.search.slice(1)), null, { timeout: 10_000 });
  t.ok(`in the A/B view a curveball with nothing left ahead restarts both runs with it earlier: ${late}`);
  // Back to the view without it, paused mid-run, for the next ones.
  await page.goto(`${baseUrl}?cmp=layered&seed=1`, { waitUntil: "load" });
  await page.locator(".ab-main").waitFor({ timeout: 30_000 });
  await kit.locator('[data-pair-alive="1"]').waitFor({ timeout: 10_000 });
  // Both runs read and poll Redis for a while yet: a Redis outage bites both.
  const [ab, abWhy] = await throwAb("redis");
  if (abWhy !== null || !/^Thrown/.test(ab)) throw new Error(`the A/B view's redis curveball: ${ab}`);
  // Its link carries it as the A/B view's own (throw=), and the kit says so;
  // nothing is thrown into the run behind the view (f=).
  await page.waitForFunction(() => /(^|&)throw=redis(%40|@)\d+/.test(location.search.slice(1)), null, { timeout: 10_000 });
  const abLink = search(page);
  if (!/The link now replays it/.test(ab)) throw new Error(`the kit does not say the A/B link replays the fault: ${ab}`);
  if (/(^|&)f=/.test(abLink)) throw new Error(`thrown behind the A/B view: ${abLink}`);
  t.ok(`in the A/B view a Redis outage lands in both runs and its link carries it (?${abLink}), nothing thrown behind it: ${ab}`);
  // Side A (singleflight alone) has no claim: a dying holder bites neither,
  // and the refusal names the side.
  const [no, noWhy] = await throwAb("holder");
  if (noWhy !== "holder" || !/side A/.test(no)) throw new Error(`the A/B view's holder curveball: ${no}`);
  t.ok(`in the A/B view a curveball that cannot bite one side is refused for both, saying why: ${no}`);
  await kit.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "kit-curveballs.png"), fullPage: true });
  await kit.close();
  // The A/B link keeps it: opened afresh, the page reads the curveball and
  // writes it back (its replay into both runs is compare.rs's host test:
  // a_link_s_curveballs_land_again_in_both_runs).
  await page.goto(`${baseUrl}?${abLink}`, { waitUntil: "load" });
  await page.locator('[data-side="b"] canvas').first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(500);
  const thrownPart = abLink.split("&").find((p) => p.startsWith("throw="));
  if (!search(page).split("&").includes(thrownPart)) throw new Error(`?${abLink} opened afresh reads ?${search(page)}`);
  t.ok(`?${abLink} opened afresh keeps its curveball`);
  // And replays it: an origin failure from 1 ms fails both runs' recompute,
  // where the comparison on its own fails nowhere.
  const errorsAtEnd = async (q) => {
    await page.goto(`${baseUrl}?${q}`, { waitUntil: "load" });
    await page.locator('[data-side="b"] canvas').first().waitFor({ timeout: 30_000 });
    await page.locator(".ab-transport button", { hasText: "Skip to the end" }).click();
    await page.waitForFunction(() => !/so far/.test(document.querySelector("[data-verdict]")?.textContent ?? "so far"), null, { timeout: 120_000 });
    return page.evaluate(() => ["a", "b"].map((s) => Number(document.querySelector(`[data-side="${s}"] [data-metric="errors"]`)?.textContent.trim() ?? NaN)));
  };
  const plain = await errorsAtEnd("cmp=layered&seed=1");
  const replayed = await errorsAtEnd("cmp=layered&seed=1&throw=origin@1");
  if (!(replayed[0] > plain[0] && replayed[1] > plain[1])) {
    throw new Error(`throw=origin@1 replays errors A ${replayed[0]}, B ${replayed[1]}; without it A ${plain[0]}, B ${plain[1]}`);
  }
  t.ok(`?cmp=layered&seed=1&throw=origin@1 replays the curveball in both runs: errors A ${plain[0]} -> ${replayed[0]}, B ${plain[1]} -> ${replayed[1]}`);
  t.noProblems("the curveballs after the end");
});
