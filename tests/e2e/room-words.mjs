// Issue 40, defect 4: the canvas's words in presenter mode scale with the
// screen as the room's DOM numbers do. Every fillText on the page is
// recorded with its font; at the run's end the words in Redis's and the
// origin's boxes ("claim attempts", "recomputes") are at least 16 px at
// 1280 x 720 and 24 px at 1920 x 1080 (they were 12 px at both), in the
// sandbox and in the A/B view (10 px there). The page's own view, outside
// presenter mode, keeps its own 10-12 px. The threads' own words under their
// glyphs ("idle") grow with them: they stayed 16 px at 1920 x 1080 beside
// 26 px words in the boxes; so does the claim's clock under Redis's box (11
// px at both). No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

const record = () => {
  const seen = (window.__canvasWords = new Map());
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    const px = parseFloat((/(\d+(?:\.\d+)?)px/.exec(this.font) ?? [])[1]);
    seen.set(String(text), px);
    return fill.call(this, text, ...rest);
  };
};
// The size each word was last drawn at: since the clear, or else before it
// (the fleet's threads are drawn again only as they change; the boxes each
// frame).
const sizes = (page, words) => page.evaluate((words) => words.map((w) => [w, window.__canvasWords.get(w) ?? window.__drawnBefore?.get(w) ?? null]), words);
const WORDS = ["claim attempts", "recomputes"];
// A thread's state in words, under its glyph in a small fleet (3 x 4).
const THREAD = "idle";

await spec("room-words", async (t) => {
  const { page } = t;
  await page.context().addInitScript(record);
  for (const [w, h, least] of [[1280, 720, 16], [1920, 1080, 24]]) {
    await page.setViewportSize({ width: w, height: h });
    for (const [name, q, ready, words] of [
      ["sandbox", "preset=burst&present=1", async () => {
        await page.keyboard.press("End");
        await t.untilEnd(120_000);
      }, WORDS],
      ["small fleet", "preset=burst&i=3&t=4&present=1", async () => {
        await page.keyboard.press("End");
        await t.untilEnd(120_000);
      }, [...WORDS, THREAD]],
      ["A/B view", "cmp=layered&present=1", async () => {
        await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
        await page.click('[data-control="compare-end"]');
        await page.waitForFunction(() => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "false", null, { timeout: 90_000 });
      }, WORDS],
    ]) {
      await page.goto(`${baseUrl}?${q}`, { waitUntil: "load" });
      await page.waitForFunction(() => document.documentElement.dataset.firstFrame || document.querySelector(".ab-side canvas"), null, { timeout: 30_000 });
      await ready();
      await page.waitForTimeout(800);
      await page.evaluate(() => {
        window.__drawnBefore = new Map(window.__canvasWords);
        window.__canvasWords.clear();
      });
      await page.waitForTimeout(800);
      const got = await sizes(page, words);
      const small = got.filter(([, px]) => !(px >= least));
      if (small.length) {
        const drawn = await page.evaluate(() => [...window.__drawnBefore].slice(0, 40));
        throw new Error(`${w}x${h} ${name}: canvas words ${JSON.stringify(small)} px, under ${least} (drawn: ${JSON.stringify(drawn)})`);
      }
      await page.screenshot({ path: path.join(shots, `room-words-${name.toLowerCase().replace("a/b view", "ab").replace(/\W+/g, "-")}-${w}x${h}.png`) });
      t.ok(`${w}x${h} ${name}: ${got.map(([word, px]) => `"${word}" ${px} px`).join(", ")} (at least ${least})`);
    }
  }
  // The claim's clock under Redis's box ("TTL … ms left", the page's 10-11
  // px) grows by the same scale as the boxes' words (it stayed 11 px).
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(`${baseUrl}?preset=burst&i=3&t=4&present=1&at=10`, { waitUntil: "load" });
    await page.waitForFunction(() => /^holder=/.test(document.querySelector(".stage .stage-canvas canvas")?.getAttribute("data-claim-clock") ?? ""), null, { timeout: 30_000 });
    await page.waitForTimeout(800);
    const drawn = await page.evaluate(() => [...window.__canvasWords]);
    const clock = drawn.filter(([word]) => /^TTL .* ms left$/.test(word));
    const box = new Map(drawn).get("claim attempts");
    if (!clock.length || !box) throw new Error(`${w}x${h}: no claim clock or box drawn: ${JSON.stringify(drawn.slice(0, 30))}`);
    const scale = box / 12;
    const small = clock.filter(([, px]) => !(px >= 10 * scale * 0.95));
    if (small.length) throw new Error(`${w}x${h}: the claim's clock ${JSON.stringify(small)} px beside the boxes' words at ${box} px (scale ${scale.toFixed(2)})`);
    t.ok(`${w}x${h}: the claim's clock "${clock.at(-1)[0]}" at ${clock.at(-1)[1]} px, the boxes' words at ${box} px`);
  }
  // Outside presenter mode the page's own size.
  // (Presenter mode stays on for the tab: a fresh tab, without it.)
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(`${baseUrl}?preset=burst`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.waitForTimeout(800);
  const plain = await sizes(page, WORDS);
  if (plain.some(([, px]) => !(px >= 10 && px <= 12))) throw new Error(`the sandbox outside presenter mode, words not the page's own 10-12 px: ${JSON.stringify(plain)}`);
  t.ok(`outside presenter mode: ${plain.map(([word, px]) => `"${word}" ${px} px`).join(", ")}`);
  t.noProblems("the canvas words");
});
