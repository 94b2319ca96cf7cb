// Issue 40, defect 4 (second half): the A/B view in presenter mode fits
// the projector's first screen at 1280 x 720 and 1920 x 1080: both fleets'
// canvases whole, and each side's ten counters on the screen (the fleets
// were cut at the bottom and all 20 counters below the fold), the verdict
// too, with no scrolling. No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

await spec("room-ab-fit", async (t) => {
  const { page } = t;
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(`${baseUrl}?cmp=layered&present=1`, { waitUntil: "load" });
    await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
    await page.click('[data-control="compare-end"]');
    await page.waitForFunction(() => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "false", null, { timeout: 90_000 });
    // The header steps back once the pointer rests (the click moved it).
    await page.waitForFunction(() => document.body.classList.contains("pointer-idle"), null, { timeout: 10_000 });
    await page.waitForTimeout(300);
    const b = await page.evaluate(() => {
      const r = (e) => {
        const x = e.getBoundingClientRect();
        return { top: Math.round(x.top), bottom: Math.round(x.bottom), left: Math.round(x.left), right: Math.round(x.right) };
      };
      const scroller = document.querySelector("main.ab-main");
      return {
        canvases: [...document.querySelectorAll(".ab-side .stage-canvas canvas:not(.overlay)")].map(r),
        counters: [...document.querySelectorAll(".ab-side .ab-metrics .metric")].map((m) => ({ name: m.querySelector("[data-metric]")?.dataset.metric, ...r(m) })),
        verdict: r(document.querySelector("[data-verdict]")),
        scrolled: scrollY + (scroller?.scrollTop ?? 0),
      };
    });
    const inside = (x) => x.top >= 0 && x.bottom <= h + 0.5 && x.left >= 0 && x.right <= w + 0.5;
    if (b.canvases.length !== 2 || !b.canvases.every(inside)) throw new Error(`${w}x${h}: the fleets ${JSON.stringify(b.canvases)} are cut by the ${h} px screen`);
    const off = b.counters.filter((c) => !inside(c));
    if (b.counters.length !== 20 || off.length) throw new Error(`${w}x${h}: ${off.length} of ${b.counters.length} side counters off the screen, e.g. ${JSON.stringify(off.slice(0, 3))}`);
    if (!inside(b.verdict)) throw new Error(`${w}x${h}: the verdict ${JSON.stringify(b.verdict)} is off the screen`);
    if (b.scrolled !== 0) throw new Error(`${w}x${h}: the view scrolled ${b.scrolled} px`);
    await page.screenshot({ path: path.join(shots, `room-ab-fit-${w}x${h}.png`) });
    t.ok(`${w}x${h}: both fleets whole, the 20 side counters and the verdict on the first screen`);
  }
  t.noProblems("the A/B view on a projector");
});
