// Embed mode: embed=1 in a 960 x 540 frame (the snippet's size) shows the
// fleet, the proof and the play controls, and nothing of the header, the
// tour, the knobs or the reference; the run plays to its proof; the link out
// opens the same run without embed. The reference's snippet writes an iframe
// of the run on screen, and the page inside that iframe is embedded.

import { spec, baseUrl } from "./lib/harness.mjs";

await spec("embed", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 960, height: 540 });
  await t.open("preset=claim-outer&embed=1");
  for (const sel of [".topbar .preset", ".topbar .modes", ".lab > .knobs", ".reference-area", ".tour", ".chart"]) {
    if (await page.locator(sel).first().isVisible()) throw new Error(`${sel} shows in embed mode`);
  }
  t.ok("no header controls, tour, knobs, chart or reference");
  for (const sel of [".stage-canvas", ".proof-panel", '[data-control="play"]']) {
    const b = await page.locator(sel).first().boundingBox();
    if (!b || b.width < 20 || b.x < 0 || b.x + b.width > 961 || b.y < 0 || b.y > 540) {
      throw new Error(`${sel} is not in the 960 x 540 frame: ${JSON.stringify(b)}`);
    }
  }
  t.ok("the fleet, the proof and the play button are in the frame");
  // A slide shows the start, not the end state: the run waits for Play.
  await page.waitForTimeout(1000);
  const waiting = await page.evaluate(() => ({
    pressed: document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed"),
    now: document.querySelector('[data-metric="now_ms"]')?.textContent.trim(),
  }));
  if (waiting.pressed !== "false" || waiting.now !== "0.0") throw new Error(`an embedded run does not wait at its start: ${JSON.stringify(waiting)}`);
  t.ok(`an embedded run waits at its start for Play (t = ${waiting.now} ms)`);
  await page.keyboard.press("End");
  await t.expectMetric("claim_attempts", "8000", "the embedded run plays to its proof");
  await t.shot("embed-960x540.png");
  const out = page.locator("[data-embed-open]");
  await out.focus();
  const href = await out.getAttribute("href");
  if (!href.includes("claim") && !href.includes("c=outer")) throw new Error(`the link out is not the run: ${href}`);
  if (href.includes("embed")) throw new Error(`the link out is still embedded: ${href}`);
  t.ok(`the link out opens the same run in a full page: ${href}`);

  // The snippet, from the sandbox.
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("preset=burst&seed=4");
  await page.locator("[data-embed-snippet]").click();
  const code = await page.locator("[data-embed-code]").inputValue();
  const src = code.match(/<iframe src="([^"]+)" width="960" height="540"/)?.[1];
  if (!src || !src.includes("seed=4") || !src.endsWith("embed=1")) throw new Error(`snippet: ${code}`);
  t.ok("the snippet is an iframe of the run on screen");
  // A slide of its own (about:blank, without the page's policy).
  const slide = await page.context().newPage();
  slide.on("pageerror", (e) => t.problems.push(`slide: ${e.message}`));
  await slide.setContent(`<!doctype html><body>${code}</body>`);
  const frame = slide.frameLocator("iframe");
  await frame.locator("[data-embed-open]").waitFor({ timeout: 30_000 });
  if (await frame.locator(".topbar .preset").isVisible()) throw new Error("the snippet's page is not embedded");
  t.ok("the snippet's frame shows the embedded page");
  await slide.screenshot({ path: new URL("./screenshots/embed-slide.png", import.meta.url).pathname });
  await slide.close();
  // Smaller frames: a scenario, a tour step and the A/B view each fit, with
  // what they are about in view and the link out over none of it.
  for (const [w, h] of [[800, 500], [640, 360]]) {
    await page.setViewportSize({ width: w, height: h });
    for (const [query, must] of [
      ["preset=burst&embed=1", [".stage-canvas", ".proof-value", '[data-control="play"]']],
      ["seed=1&embed=1#tour/basics/1", [".stage-canvas", ".tour-question", "[data-predict-option]"]],
      ["cmp=layered&embed=1", ['[data-side="a"] .stage-canvas', '[data-side="b"] .stage-canvas', "[data-verdict]", ".ab-transport"]],
    ]) {
      await t.open(query);
      if (query.startsWith("cmp")) await page.locator('[data-side="b"] canvas').first().waitFor({ timeout: 30_000 });
      else await page.locator(must[1]).first().waitFor({ state: "visible", timeout: 30_000 });
      await page.waitForTimeout(600);
      const out = await page.locator("[data-embed-open]").boundingBox();
      for (const sel of must) {
        const b = await page.locator(sel).first().boundingBox();
        if (!b || b.width < 10 || b.x < 0 || b.x + b.width > w + 1 || b.y < 0 || b.y >= h - 10) {
          throw new Error(`${w}x${h} ${query}: ${sel} is not in the frame: ${JSON.stringify(b)}`);
        }
        // Every fleet whole, foot included (the Origin box sits low).
        if (sel.includes("stage-canvas") && b.y + b.height > h + 1) throw new Error(`${w}x${h} ${query}: ${sel} is cut at the frame's foot: ${JSON.stringify(b)}`);
        const overlaps = out && out.x < b.x + b.width && b.x < out.x + out.width && out.y < b.y + b.height && b.y < out.y + out.height;
        if (overlaps && sel !== ".ab-transport") throw new Error(`${w}x${h} ${query}: the link out covers ${sel}`);
      }
      if (query.startsWith("cmp")) {
        const clock = (await page.locator(".ab-transport .clock").textContent()).trim();
        if (!clock.startsWith("t = 0.0 ms")) throw new Error(`${w}x${h}: the embedded A/B view does not wait at its start: ${clock}`);
      }
      await t.shot(`embed-${query.split(/[=&#]/)[0]}-${w}x${h}.png`);
    }
    t.ok(`${w}x${h}: a scenario, a tour step (its question and options) and the A/B view (both fleets whole, the verdict, waiting at t = 0) fit the frame, the link out over none of them`);
  }
  if (!baseUrl) throw new Error("no base URL");
  t.noProblems("embed mode");
});
