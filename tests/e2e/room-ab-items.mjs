// Issue 40, defect 1: an A/B item after another A/B item in a trainer's
// list shows its own runs, not the previous comparison's under its title.
// A list of four A/B items (layered, claim-order, losers, redis-outage),
// walked with Page Down in presenter mode, each item run to its end with
// End: each side shows the numbers stampede-sim --comparison prints for
// that pair. Back returns to the previous item, with its runs. The cost
// slider and the picker rebuild the runs too. No console errors.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { control, root, spec, baseUrl } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const sim = (name) => JSON.parse(execFileSync(cli, ["--comparison", name, "--json"], { encoding: "utf8" }));
const b64 = (s) => Buffer.from(s, "utf8").toString("base64url");

const ITEMS = ["layered", "claim-order", "losers", "redis-outage"];
const list = ITEMS.map((n) => b64(`c:cmp=${n}`)).join(".");

const shown = (page) =>
  page.evaluate(() => {
    const side = (s) =>
      Object.fromEntries([...document.querySelectorAll(`[data-side="${s}"] [data-metric]`)].map((e) => [e.dataset.metric, e.textContent.trim()]));
    return {
      cmp: new URLSearchParams(location.search).get("cmp"),
      picked: document.querySelector('[data-control="compare-preset"]')?.value,
      a: side("a"),
      b: side("b"),
    };
  });

/// Waits until both sides show, for every counter they show, what
/// stampede-sim says for comparison `name` at its end.
async function showsRunsOf(t, name, why) {
  const want = sim(name);
  const ok = (s) => {
    const a = Object.entries(s.a);
    const b = Object.entries(s.b);
    return (
      s.picked === name &&
      a.length >= 8 &&
      b.length >= 8 &&
      a.every(([m, v]) => Number(v) === Number(want.a.report[m])) &&
      b.every(([m, v]) => Number(v) === Number(want.b.report[m]))
    );
  };
  const deadline = Date.now() + 40_000;
  let s = await shown(t.page);
  while (!ok(s) && Date.now() < deadline) {
    await t.page.waitForTimeout(250);
    s = await shown(t.page);
  }
  if (!ok(s)) {
    const diff = ["a", "b"]
      .flatMap((side) => Object.entries(s[side]).filter(([m, v]) => Number(v) !== Number(want[side].report[m])).map(([m, v]) => `${side}.${m} = ${v} (want ${want[side].report[m]})`))
      .slice(0, 6);
    throw new Error(`${why}: the view picks ${s.picked} (cmp=${s.cmp}) and shows ${diff.join(", ")}`);
  }
  t.ok(`${why}: side A ${s.a.recomputes} recomputes, ${s.a.claim_attempts} claim attempts; side B ${s.b.recomputes}, ${s.b.claim_attempts}, as stampede-sim --comparison ${name}`);
}

/// Both sides' counters once the one clock has stopped at the runs' end.
async function atEnd(page) {
  await page.waitForFunction(
    () => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "false",
    null,
    { timeout: 60_000 },
  );
  const s = await shown(page);
  return { a: s.a, b: s.b };
}

const item = (page, k) =>
  page.waitForFunction((k) => new URLSearchParams(location.search).get("item") === String(k), k, { timeout: 30_000 });

await spec("room-ab-items", async (t) => {
  const { page } = t;
  await page.goto(`${baseUrl}?list=${list}&item=1&present=1`, { waitUntil: "load" });
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
  await page.keyboard.press("End");
  await showsRunsOf(t, "layered", "item 1 (layered), End");

  for (const [k, name] of [
    [2, "claim-order"],
    [3, "losers"],
    [4, "redis-outage"],
  ]) {
    await page.keyboard.press("PageDown");
    await item(page, k);
    await page.keyboard.press("End");
    await showsRunsOf(t, name, `Page Down to item ${k} (${name}), End`);
  }

  await page.goBack();
  await item(page, 3);
  await page.keyboard.press("End");
  await showsRunsOf(t, "losers", "Back to item 3 (losers), End");

  // The picker and the cost slider, outside a list: each builds both runs.
  await page.goto(`${baseUrl}?cmp=layered`, { waitUntil: "load" });
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
  await page.click(control("compare-end"));
  await showsRunsOf(t, "layered", "cmp=layered, Skip to the end");
  await page.selectOption(control("compare-preset"), "claim-order");
  await page.click(control("compare-end"));
  await showsRunsOf(t, "claim-order", "the picker to claim-order, Skip to the end");
  await page.selectOption(control("compare-preset"), "cost");
  await page.click(control("compare-end"));
  await showsRunsOf(t, "cost", "the picker to cost, Skip to the end");
  // The cost slider: the runs at the new cost are those its link opens.
  await page.locator(control("compare-cost")).fill("0");
  await page.waitForFunction(() => new URLSearchParams(location.search).has("cost"), null, { timeout: 10_000 });
  const cost = new URLSearchParams(await page.evaluate(() => location.search)).get("cost");
  await page.click(control("compare-end"));
  const moved = await atEnd(page);
  await page.goto(`${baseUrl}?cmp=cost&cost=${cost}`, { waitUntil: "load" });
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
  await page.click(control("compare-end"));
  const direct = await atEnd(page);
  if (JSON.stringify(moved) !== JSON.stringify(direct) || moved.a.recomputes === undefined) {
    throw new Error(`the cost slider at ${cost} ms shows ${JSON.stringify(moved)}, its link ${JSON.stringify(direct)}`);
  }
  t.ok(`the cost slider to ${cost} ms: both sides as cmp=cost&cost=${cost} opened directly (p99 ${moved.a.p99_ms} / ${moved.b.p99_ms} ms)`);
});
