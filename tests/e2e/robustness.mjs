// Nothing kills the page: broken or hostile links show a banner and a working
// page, a fleet too big to draw thread by thread is drawn aggregated and says
// so, and a panic shows a message with a reload button. Also the two screen
// sizes, light and dark, with screenshots in tests/e2e/screenshots/.

import { spec, control, metric } from "./lib/harness.mjs";

await spec("robustness", async (t) => {
  const { page } = t;
  const working = async (why) => {
    await page.waitForFunction((sel) => Number(document.querySelector(sel)?.textContent) > 0, metric("now_ms"), {
      timeout: 20_000,
    });
    t.ok(`the page works: ${why}`);
  };

  const broken = [
    ["i=abc&zzz=1&c=sideways", ["instances", "zzz", "claim"]],
    ["speed=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&%3Cscript%3E=1&seed=-4", ["speed", "seed", "<script>"]],
    [`i=${"9".repeat(20_000)}&t=${"x".repeat(5_000)}`, ["characters long"]],
  ];
  for (const [k, [query, words]] of broken.entries()) {
    await t.open(query);
    const banner = page.locator('[role="alert"]');
    await banner.waitFor({ state: "visible", timeout: 10_000 });
    const text = (await banner.textContent()) ?? "";
    for (const w of words) {
      if (!text.includes(w)) throw new Error(`banner for link ${k + 1} should mention ${w}: ${text}`);
    }
    if ((await banner.locator("script, img").count()) > 0) throw new Error("markup from the URL was rendered");
    await t.expectMetric("naive", "8000", "defaults in force");
    await working(`broken link ${k + 1} falls back to defaults`);
    await t.shot(`broken-link-${k + 1}.png`);
  }
  t.noProblems("while opening broken links");

  // Too many threads to draw: aggregated, and said so on screen.
  await t.open("i=1000&t=1000&speed=1");
  await page.locator('[data-note="aggregated"]').waitFor({ state: "visible", timeout: 20_000 });
  await t.expectMetric("naive", "1000000", "1000 x 1000");
  await working("1000 x 1000 is drawn aggregated and says so");
  await page.waitForTimeout(1500);
  const timings = await page.evaluate(() => ({ ...document.documentElement.dataset }));
  console.log(`# 1000x1000: build ${timings.buildMs} ms, longest frame ${timings.longestFrameMs} ms (${timings.longestFramePhases})`);
  await t.shot("desktop-1000x1000.png");

  // Both screen sizes, light and dark: nothing cut off, controls reachable.
  const hooks = ["play", "step", "restart", "speed", "timeline", "seed", "preset", "instances", "threads", "singleflight", "claim"];
  for (const [w, h, name] of [[1280, 800, "desktop"], [390, 844, "phone"]]) {
    await page.setViewportSize({ width: w, height: h });
    await t.open();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 0) throw new Error(`${name}: the page is ${overflow}px wider than the screen`);
    for (const c of hooks) {
      const el = page.locator(control(c));
      await el.scrollIntoViewIfNeeded();
      const box = await el.boundingBox();
      if (!box || box.x < 0 || box.x + box.width > w + 1) {
        throw new Error(`${name}: control ${c} is cut off: ${JSON.stringify(box)}`);
      }
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(400);
      await t.shot(`${name}-${w}x${h}-${scheme}.png`);
    }
    await t.shot(`${name}-${w}x${h}-full.png`, { fullPage: true });
    await page.emulateMedia({ colorScheme: "light" });
    t.ok(`${name} ${w}x${h}: no horizontal overflow, every control reachable`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  t.noProblems("at both screen sizes");

  // A panic: a visible message and a reload button, not a frozen page.
  await t.open();
  await page.evaluate(() => {
    try {
      window.wasmBindings.crash_for_testing();
    } catch {
      // The panic aborts the wasm call; the message is what matters.
    }
  });
  const crash = page.locator("[data-crash]");
  await crash.waitFor({ state: "visible", timeout: 5_000 });
  const reload = crash.locator("button");
  if ((await reload.textContent())?.includes("Reload") !== true) throw new Error("no reload button");
  await t.shot("crash.png");
  await reload.click();
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame && !document.querySelector("[data-crash]"));
  t.ok("a panic shows a message with a reload button, and reloading brings the page back");
  // The panic itself is logged as a console error on purpose; anything else is not.
  const others = t.problems.filter((p) => !p.includes("crash requested for testing") && !p.includes("unreachable"));
  if (others.length) throw new Error(`unexpected problems:\n  ${others.join("\n  ")}`);
});
