// Browser performance probe for the built page (make bench). Serves nothing
// itself: tests/e2e/run.sh serves dist/ and sets E2E_URL.
//
//  1. navigation -> first animated frame (the page stamps
//     document.documentElement.dataset.firstFrame with performance.now());
//  2. frame times: requestAnimationFrame deltas over 5 s of playback of the
//     interview card (40 x 200), p50 / p95 / max;
//  3. long tasks: PerformanceObserver('longtask') from before the page's own
//     scripts run, over a 1,000 x 1,000 burst being built and played;
//  4. bytes transferred for the page (raw: the test server does not compress);
//  5. cold first visits, each in a browser of its own with a fresh profile
//     (no HTTP cache, no compiled-code cache, a new renderer with no font
//     loaded): long tasks up to 1.5 s after the first frame, and the first
//     frame. Twice over: a visit to a browser that has finished starting
//     (as a link opened in a running browser is), and a visit the moment
//     the browser starts, where its own start-up shares the cores.
//
// Prints a Markdown table and writes bench-out/frame-probe.json.

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseUrl as base, launch, root } from "../tests/e2e/lib/harness.mjs";

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};

// Long tasks from before the page's own scripts run.
const observeLongTasks = () => {
  window.__longtasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longtasks.push(e.duration);
  }).observe({ type: "longtask", buffered: true });
};

// 5: cold first visits (see the top), before anything else runs.
const COLD_VISITS = Number(process.env.COLD_VISITS ?? 6);
const coldVisit = async (settleMs) => {
  const { context, userDataDir } = await launch("stampede-cold-");
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.waitForTimeout(settleMs);
    await page.addInitScript(observeLongTasks);
    await page.goto(base, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await page.waitForTimeout(1500);
    return await page.evaluate(() => ({
      first: Number(document.documentElement.dataset.firstFrame),
      longtasks: window.__longtasks.slice(),
    }));
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
};
const coldRuns = async (settleMs) => {
  const visits = [];
  for (let i = 0; i < COLD_VISITS; i++) visits.push(await coldVisit(settleMs));
  const all = visits.flatMap((v) => v.longtasks);
  return {
    visits: visits.length,
    visits_without_long_task: visits.filter((v) => v.longtasks.length === 0).length,
    long_tasks: all.length,
    longest_task_ms: all.length ? Math.max(...all) : 0,
    first_frame_p50_ms: quantile(visits.map((v) => v.first), 0.5),
    first_frame_max_ms: Math.max(...visits.map((v) => v.first)),
  };
};

const results = {};
results.cold_idle_browser = await coldRuns(3000);
results.cold_at_launch = await coldRuns(0);

const { context, userDataDir } = await launch("stampede-probe-");


// requestAnimationFrame deltas (ms) over 5 s of the page as it is.
const rafDeltas = (page) =>
  page.evaluate(
    () =>
      new Promise((resolve) => {
        const out = [];
        let last = performance.now();
        const end = last + 5000;
        const tick = (now) => {
          out.push(now - last);
          last = now;
          if (now < end) requestAnimationFrame(tick);
          else resolve(out);
        };
        requestAnimationFrame(tick);
      }),
  );

let failure = null;
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript(observeLongTasks);

  // 0: the first visit, for the bytes it downloads.
  await page.goto(base, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.waitForTimeout(1500);
  // What the cold first visit downloaded (the test server does not compress).
  results.transfer_bytes = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const res = performance.getEntriesByType("resource");
    return (nav?.transferSize ?? 0) + res.reduce((a, r) => a + (r.transferSize ?? 0), 0);
  });

  // 1 + 2: the interview card in slow motion, so 5 s of playback stay busy.
  await page.goto(`${base}?preset=burst&speed=0.1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, {
    timeout: 30_000,
  });
  results.first_frame_ms = Number(
    await page.evaluate(() => document.documentElement.dataset.firstFrame),
  );
  const deltas = await rafDeltas(page);
  results.frames = deltas.length;
  results.frame_p50_ms = quantile(deltas, 0.5);
  results.frame_p95_ms = quantile(deltas, 0.95);
  results.frame_max_ms = Math.max(...deltas);
  results.virtual_ms_after_5s = Number(
    await page.locator('[data-metric="now_ms"]').first().textContent(),
  );
  results.longtasks_40x200 = await page.evaluate(() => window.__longtasks.slice());

  // 3: a million threads, built and played at full speed for 8 s.
  await page.goto(`${base}?preset=burst&i=1000&t=1000&speed=1`, { waitUntil: "load" });
  await page.waitForTimeout(8000);
  const big = await page.evaluate(() => window.__longtasks.slice());
  results.longtasks_1000x1000 = big.length;
  results.longest_task_1000x1000_ms = big.length ? Math.max(...big) : 0;
  results.virtual_ms_1000x1000_after_8s = Number(
    await page.locator('[data-metric="now_ms"]').first().textContent(),
  );

  // 6: presenter mode at 1920 x 1080, the interview card (40 x 200).
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.goto(`${base}?preset=burst&speed=0.1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.keyboard.press("p");
  const pres = await rafDeltas(page);
  results.presenter_frames = pres.length;
  results.presenter_p50_ms = quantile(pres, 0.5);
  results.presenter_p95_ms = quantile(pres, 0.95);

  // 7: the A/B view: two 40 x 200 fleets from one clock.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}?cmp=layered`, { waitUntil: "load" });
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]');
  await page.evaluate(() => (window.__longtasks = []));
  const ab = await rafDeltas(page);
  results.ab_frames = ab.length;
  results.ab_p50_ms = quantile(ab, 0.5);
  results.ab_p95_ms = quantile(ab, 0.95);
  results.ab_longtasks = await page.evaluate(() => window.__longtasks.slice());
  results.page_errors = errors;
} catch (e) {
  failure = e;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
if (failure) {
  console.error(`frame-probe: ${failure.message}`);
  process.exit(1);
}

const out = path.join(root, "bench-out");
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, "frame-probe.json"), JSON.stringify(results, null, 2));
const f = (x) => (typeof x === "number" ? x.toFixed(1) : String(x));
console.log("| measure | value |");
console.log("|---|---:|");
console.log(`| navigation -> first animated frame | ${f(results.first_frame_ms)} ms |`);
console.log(`| frames in 5 s (40 x 200) | ${results.frames} |`);
console.log(`| frame time p50 / p95 / max | ${f(results.frame_p50_ms)} / ${f(results.frame_p95_ms)} / ${f(results.frame_max_ms)} ms |`);
console.log(`| long tasks during 40 x 200 (start-up included) | ${results.longtasks_40x200.length} (${results.longtasks_40x200.map(f).join(", ") || "none"}) |`);
console.log(`| long tasks, 1,000 x 1,000 (8 s) | ${results.longtasks_1000x1000} |`);
console.log(`| longest task, 1,000 x 1,000 | ${f(results.longest_task_1000x1000_ms)} ms |`);
console.log(`| virtual ms reached, 1,000 x 1,000 after 8 s | ${f(results.virtual_ms_1000x1000_after_8s)} |`);
console.log(`| bytes transferred by the cold first visit (uncompressed server) | ${results.transfer_bytes} |`);
for (const [key, what] of [
  ["cold_idle_browser", "cold first visit, browser started"],
  ["cold_at_launch", "cold first visit at browser launch"],
]) {
  const c = results[key];
  console.log(`| ${what}: visits with no task over 50 ms | ${c.visits_without_long_task} of ${c.visits} |`);
  console.log(`| ${what}: long tasks in all, longest | ${c.long_tasks}, ${f(c.longest_task_ms)} ms |`);
  console.log(`| ${what}: first frame p50 / max | ${f(c.first_frame_p50_ms)} / ${f(c.first_frame_max_ms)} ms |`);
}
console.log(`| presenter mode 1920 x 1080, 40 x 200: frames in 5 s, p50 / p95 | ${results.presenter_frames}, ${f(results.presenter_p50_ms)} / ${f(results.presenter_p95_ms)} ms |`);
console.log(`| A/B view, two 40 x 200 fleets: frames in 5 s, p50 / p95 | ${results.ab_frames}, ${f(results.ab_p50_ms)} / ${f(results.ab_p95_ms)} ms |`);
console.log(`| long tasks in the A/B view | ${results.ab_longtasks.length} (${results.ab_longtasks.map(f).join(", ") || "none"}) |`);
if (results.page_errors.length) console.log(`page errors: ${results.page_errors.join("; ")}`);
