// The A/B view: every comparison shows both sides and the difference it is
// about, with the numbers stampede-sim --comparison prints for the same pair;
// an A/B link restores the view; the recompute-cost control moves the two
// sides the way the comparison says; screenshots at desktop and phone size.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const sim = (args) => JSON.parse(execFileSync(cli, [...args, "--json"], { encoding: "utf8" }));
const names = execFileSync(cli, ["--list-comparisons"], { encoding: "utf8" })
  .split("\n")
  .map((l) => l.trim().split(/\s+/)[0])
  .filter(Boolean);

async function openAb(t, query) {
  const { page } = t;
  await page.goto(`${process.env.E2E_URL}?${query}`, { waitUntil: "load" });
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
}

async function toEnd(t) {
  const { page } = t;
  await page.click(control("compare-end"));
  await page.waitForFunction(
    () => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "false",
    null,
    { timeout: 120_000 },
  );
}

const sideValue = (t, side, m) =>
  t.page.locator(`[data-side="${side}"] [data-metric="${m}"]`).first().textContent();

await spec("compare", async (t) => {
  const { page } = t;
  if (names.length < 8) throw new Error(`stampede-sim --list-comparisons lists ${names.length}: ${names}`);

  for (const name of names) {
    await openAb(t, `cmp=${name}`);
    await toEnd(t);
    const cliOut = sim(["--comparison", name]);
    for (const side of ["a", "b"]) {
      const want = cliOut[side].report;
      // Whatever counters the side shows, each must be the CLI's.
      const shownMetrics = await page
        .locator(`[data-side="${side}"] [data-metric]`)
        .evaluateAll((els) => els.map((e) => e.dataset.metric));
      if (shownMetrics.length < 8) throw new Error(`${name}: side ${side} shows ${shownMetrics.length} counters`);
      for (const m of shownMetrics) {
        const shown = Number((await sideValue(t, side, m)).trim());
        if (shown !== Number(want[m])) {
          throw new Error(`${name}: side ${side} shows ${m} = ${shown}, stampede-sim --comparison ${name} says ${want[m]}`);
        }
      }
    }
    // The question's counter is called out first, with the better side.
    const subject = await page.locator(".ab-diff li.subject").first();
    const metric = await subject.getAttribute("data-diff");
    const text = (await subject.textContent()).trim();
    const winner = cliOut.winner ?? null;
    if (metric !== cliOut.metric) throw new Error(`${name}: the first difference is ${metric}, the question is about ${cliOut.metric}`);
    if (winner && !text.includes(`${winner.toUpperCase()} is better`)) {
      throw new Error(`${name}: "${text}" does not name side ${winner} as better`);
    }
    // One overall verdict, by the core's objective, word for word the CLI's.
    const verdict = (await page.locator("[data-verdict]").textContent()).trim();
    if (verdict !== cliOut.verdict.sentence) {
      throw new Error(`${name}: the page's verdict "${verdict}", the CLI's "${cliOut.verdict.sentence}"`);
    }
    t.ok(`${name}: both sides match stampede-sim --comparison ${name}; "${text}"; "${verdict}"`);
  }
  // Mid-run the verdict is only "so far".
  await openAb(t, "cmp=jitter");
  const early = (await page.locator("[data-verdict]").textContent()).trim();
  if (!early.includes("so far")) throw new Error(`mid-run, the verdict says "${early}"`);
  // And so is each counter's better side.
  for (const row of await page.locator(".ab-diff li").allTextContents()) {
    if (row.includes(" is better") && !row.trim().endsWith(" is better so far")) {
      throw new Error(`mid-run, a difference says "${row.trim()}"`);
    }
  }
  t.ok(`mid-run: "${early}"`);
  t.noProblems("after every comparison");

  // Claim inside vs outside on the card: 8,000 claim attempts against 40.
  await openAb(t, "cmp=claim-order");
  await toEnd(t);
  const outside = Number(await sideValue(t, "a", "claim_attempts"));
  const inside = Number(await sideValue(t, "b", "claim_attempts"));
  if (outside !== 8000 || inside !== 40) throw new Error(`claim attempts ${outside} vs ${inside}, want 8000 vs 40`);
  t.ok("claim outside vs inside: 8000 vs 40 claim attempts");
  await t.shot("compare-desktop.png", { fullPage: true });

  // An A/B link restores the view, its comparison and its cost.
  await openAb(t, "cmp=cost&cost=500&seed=3");
  const picked = await page.locator(control("compare-preset")).inputValue();
  const label = (await page.locator(".ab-cost span").first().textContent()).trim();
  if (picked !== "cost" || !label.includes("500 ms")) throw new Error(`link gave ${picked}, "${label}"`);
  t.ok(`cmp=cost&cost=500 restores the cost comparison at 500 ms ("${label}")`);

  // The cost control (on the page's own seed): at 20 ms singleflight alone
  // answers sooner; at 700 ms 40 copies swamp the origin and the claim wins.
  await openAb(t, "cmp=cost");
  const setCost = async (pos) => {
    await page.locator(control("compare-cost")).fill(String(pos));
    await page.locator(control("compare-cost")).dispatchEvent("change");
    await page.waitForTimeout(100);
    await toEnd(t);
  };
  await setCost(0);
  const [a50, b50] = [Number(await sideValue(t, "a", "p50_ms")), Number(await sideValue(t, "b", "p50_ms"))];
  if (!(a50 < b50)) throw new Error(`at 20 ms: p50 ${a50} (singleflight only) vs ${b50} (with the claim)`);
  t.ok(`20 ms: singleflight alone answers sooner (p50 ${a50} vs ${b50} ms)`);
  await setCost(60);
  const [aT, bT] = [Number(await sideValue(t, "a", "timeouts")), Number(await sideValue(t, "b", "timeouts"))];
  const [a50b, b50b] = [Number(await sideValue(t, "a", "p50_ms")), Number(await sideValue(t, "b", "p50_ms"))];
  if (!(aT > 0 && bT === 0 && b50b < a50b)) {
    throw new Error(`at 700 ms: timeouts ${aT} vs ${bT}, p50 ${a50b} vs ${b50b}`);
  }
  t.ok(`700 ms: singleflight alone swamps the origin (${aT} timeouts), the claim answers all (p50 ${b50b} vs ${a50b} ms)`);
  if (!page.url().includes("cmp=cost&cost=700")) throw new Error(`the link lost the comparison or its cost: ${page.url()}`);

  await page.setViewportSize({ width: 390, height: 844 });
  await openAb(t, "cmp=layered");
  await toEnd(t);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) throw new Error(`phone: ${overflow}px of horizontal overflow`);
  await t.shot("compare-phone.png", { fullPage: true });
  t.ok("phone 390x844: the sides stack, no horizontal overflow");
  t.noProblems("at the end");
});
