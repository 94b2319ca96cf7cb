// The code beside the fleet (issue 39, §1). At 1280 x 800 on "The read
// path, counted" (basics/3, Python): the code panel ([data-code-panel])
// sits right of the fleet from the fleet's top and its lines never scroll
// sideways; a click on a thread follows it, "Step this thread" moves the
// clock to that thread's next event, and at each step the lit line
// ([data-lit]) and the whole fleet are on the screen together. On a phone
// (390 x 844) a tab swaps the fleet for the code, its lit line in view,
// and back. Screenshots at both sizes.
import { control, metric, spec } from "./lib/harness.mjs";

const ADDRESS = "i=3&t=4&seed=1#tour/basics/3";

/// Where the fleet's canvas, the code panel, its code box and the lit
/// line are on the screen, and the code box's widths.
const where = (page) =>
  page.evaluate(() => {
    const r = (e) => {
      if (!e) return null;
      const b = e.getBoundingClientRect();
      return { left: b.left, top: b.top, right: b.right, bottom: b.bottom, w: b.width, h: b.height };
    };
    const box = document.querySelector("[data-code-panel] pre.source");
    return {
      canvas: r(document.querySelector(".stage .stage-canvas canvas")),
      panel: r(document.querySelector("[data-code-panel]")),
      box: r(box),
      lit: r(document.querySelector("[data-code-panel] :is(pre.source, .listing:not([hidden])) [data-lit]")),
      lits: document.querySelectorAll("[data-code-panel] :is(pre.source, .listing:not([hidden])) [data-lit]").length,
      scroll: box ? { w: box.scrollWidth, view: box.clientWidth } : null,
      view: { w: innerWidth, h: innerHeight },
      said: document.querySelector("[data-followed]")?.textContent.trim() ?? "",
      step: document.querySelector("[data-source-step]")?.textContent.trim() ?? "",
    };
  });

const onScreen = (b, v) => b && b.h > 0 && b.top >= -1 && b.bottom <= v.h + 1 && b.left >= -1 && b.right <= v.w + 1;
// A phone's code box scrolls its long lines: the line's start on screen.
const startOnScreen = (b, v) => b && b.h > 0 && b.top >= -1 && b.bottom <= v.h + 1 && b.left >= -1 && b.left < v.w;
const inside = (b, o) => b && o && b.top >= o.top - 1 && b.bottom <= o.bottom + 1;

await spec("code-beside", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open(ADDRESS);
  await page.waitForFunction(() => document.querySelector('[data-control="predict-show"]')?.offsetParent, null, { timeout: 30_000 });
  await page.locator(control("predict-show")).click();
  await page.locator('[data-write-it] input[value="python"]').check();
  await page.waitForSelector('[data-source="python"]', { timeout: 5000 });
  // "Just show me" plays the step: back to its start, paused (Restart is
  // under More on the tour).
  await page.locator(control("more-controls")).click();
  await page.locator(control("restart")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === 0 && document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false", null, { timeout: 10_000 });
  await page.locator(control("more-controls")).click();

  // Beside the fleet, from its top, readable without sideways scrolling.
  let w = await where(page);
  if (!w.panel) throw new Error("no [data-code-panel]");
  if (!(w.panel.left >= w.canvas.right - 1)) throw new Error(`the code panel is not right of the fleet: ${JSON.stringify(w)}`);
  if (!(w.panel.top < w.canvas.top + 60 && w.panel.top >= 0)) throw new Error(`the code panel does not start beside the fleet's top: ${JSON.stringify(w)}`);
  if (w.scroll.w > w.scroll.view + 1) throw new Error(`the code box scrolls sideways: ${w.scroll.w} px of lines in ${w.scroll.view} px`);
  t.ok(`the code panel at x ${Math.round(w.panel.left)}-${Math.round(w.panel.right)}, y ${Math.round(w.panel.top)}, right of the fleet (x ${Math.round(w.canvas.left)}-${Math.round(w.canvas.right)}); its ${w.scroll.view} px box holds its lines`);

  // A click on a thread follows it.
  const canvas = page.locator(".stage .stage-canvas canvas").first();
  const cb = await canvas.boundingBox();
  for (const [fx, fy] of [[0.12, 0.2], [0.3, 0.3], [0.5, 0.5], [0.12, 0.5]]) {
    await canvas.click({ position: { x: cb.width * fx, y: cb.height * fy } });
    await page.waitForTimeout(200);
    if (/^Thread \d+ of office \d+/.test((await where(page)).said)) break;
  }
  w = await where(page);
  if (!/^Thread \d+ of office \d+/.test(w.said)) throw new Error(`a click on the fleet follows nobody: "${w.said}"`);
  const who = w.said.match(/^Thread \d+ of office \d+/)[0];
  // The Follow picker says whom: the clicked thread, not "nobody".
  const picked = await page.locator(control("follow")).evaluate((s) => ({ value: s.value, label: s.selectedOptions[0]?.textContent ?? "" }));
  if (picked.value === "nobody" || (!/^office\d$/.test(picked.value) && picked.label.toLowerCase() !== who.toLowerCase())) throw new Error(`after a click on ${who} the Follow picker says ${JSON.stringify(picked)}`);
  t.ok(`the Follow picker names the clicked thread: "${picked.label}"`);

  // Step by step: the clock moves to the thread's next event; its line is
  // lit beside it, in the box's view, the fleet on the screen with it.
  const seen = [];
  for (let i = 0; i < 12; i++) {
    const before = await t.text("now_ms");
    await page.locator(control("thread-step")).click();
    try {
      await page.waitForFunction((b) => document.querySelector('[data-metric="now_ms"]').textContent !== b, before, { timeout: 5000 });
    } catch {
      break;
    }
    await page.waitForTimeout(400);
    w = await where(page);
    if (!w.said.startsWith(who)) throw new Error(`after a step the caption follows someone else: "${w.said}" (was ${who})`);
    if (!onScreen(w.canvas, w.view)) throw new Error(`at ${await t.text("now_ms")} ms the fleet is off the screen: ${JSON.stringify(w.canvas)}`);
    if (w.lits === 0) {
      if (!/not in this code|Follow a thread/.test(w.step)) throw new Error(`nothing lit, and the line over the code says ${JSON.stringify(w.step)}`);
      seen.push(`${await t.text("now_ms")} ms: -`);
      continue;
    }
    if (!onScreen(w.lit, w.view) || !inside(w.lit, w.box)) throw new Error(`at ${await t.text("now_ms")} ms the lit line is out of view: ${JSON.stringify(w)}`);
    seen.push(`${await t.text("now_ms")} ms: ${w.step.match(/^Card line \d+/)?.[0]} at y ${Math.round(w.lit.top)}`);
  }
  if (seen.filter((s) => !s.endsWith("-")).length < 3) throw new Error(`too few lit steps: ${seen.join("; ")}`);
  t.ok(`${who}, step by step, lit beside the fleet: ${seen.join("; ")}`);
  await t.shot("code-beside-1280.png");

  // A phone: the Code tab puts the code in the fleet's place, its line lit
  // in view; Fleet brings the fleet back; the lit line is kept.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(400);
  const litBefore = (await where(page)).step;
  await page.locator('[data-code-tab="code"]').click();
  await page.waitForTimeout(500);
  w = await where(page);
  if (w.canvas && w.canvas.h > 0) throw new Error(`with the code shown the fleet is still drawn: ${JSON.stringify(w.canvas)}`);
  if (!(w.panel.top >= -1 && w.panel.top < 100)) throw new Error(`the code panel is not on the phone's screen: ${JSON.stringify(w.panel)}`);
  if (w.step !== litBefore) throw new Error(`the Code tab changed the step: ${JSON.stringify(w.step)} vs ${JSON.stringify(litBefore)}`);
  if (!w.lits || !startOnScreen(w.lit, w.view) || !inside(w.lit, w.box)) throw new Error(`on the phone the lit line is out of view: ${JSON.stringify(w)}`);
  if (w.scroll && (await page.evaluate(() => document.documentElement.scrollWidth)) > 390) throw new Error("the phone's page scrolls sideways");
  await t.shot("code-beside-390-code.png");
  await page.locator('[data-code-tab="fleet"]').click();
  await page.waitForTimeout(400);
  w = await where(page);
  if (!(w.canvas && w.canvas.h > 0)) throw new Error("the Fleet tab does not bring the fleet back");
  await page.locator('[data-code-tab="code"]').click();
  await page.waitForTimeout(400);
  w = await where(page);
  if (w.step !== litBefore || !w.lits || !startOnScreen(w.lit, w.view)) throw new Error(`back on the code, the lit line is lost: ${JSON.stringify(w)}`);
  t.ok(`on a phone the Code tab swaps the fleet for the code, "${w.step.slice(0, 50)}…" lit at y ${Math.round(w.lit?.top ?? -1)}, and back`);
  await page.locator('[data-code-tab="fleet"]').click();
  t.noProblems("code-beside");
});
