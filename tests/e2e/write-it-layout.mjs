// The layout defects of issue 39 (§5): at 1280 x 800 basics/2's verdict
// is not under the sticky Back / Next bar once shown; on a phone the tour
// shows the step's place (its count) and its title; no
// counter shows a person its field name; the clock says "stopped there"
// only once it stands there; solid/5 says where its claim attempts come
// from, with the run's number. Screenshots at both sizes.
import { control, spec } from "./lib/harness.mjs";

const untilStep = (page, step) =>
  page.waitForFunction((s) => document.querySelector("[data-tour-step]")?.dataset.tourStep === s, step, { timeout: 30_000 });

/// A picker's width on screen and its own width for its names (a copy of
/// it beside it, unsqueezed, out of the flow), and the name it shows.
const pickerWidths = (page, selector) =>
  page.evaluate((sel) => {
    const select = document.querySelector(sel);
    const copy = select.cloneNode(true);
    copy.style.cssText = "position: absolute; visibility: hidden; width: auto; min-width: 0; max-width: none";
    select.after(copy);
    const need = copy.getBoundingClientRect().width;
    copy.remove();
    return { name: select.selectedOptions[0].textContent, need, has: select.getBoundingClientRect().width };
  }, selector);

await spec("write-it-layout", async (t) => {
  const { page } = t;

  // The verdict above the sticky bar.
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("seed=1#tour/basics/2");
  await untilStep(page, "basics/2");
  await page.waitForFunction(() => document.querySelector('[data-control="predict-show"]')?.offsetParent, null, { timeout: 30_000 });
  await page.locator(control("predict-show")).click();
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]") && document.querySelector(".tour-verdict")?.textContent.trim(), null, { timeout: 60_000 });
  await page.waitForTimeout(600);
  const v = await page.evaluate(() => {
    const a = document.querySelector(".tour-verdict").getBoundingClientRect();
    const b = document.querySelector(".tour-nav").getBoundingClientRect();
    return { verdict: [a.top, a.bottom], bar: [b.top, b.bottom], h: innerHeight, text: document.querySelector(".tour-verdict").textContent.trim() };
  });
  if (v.verdict[1] > v.bar[0] + 1 && v.bar[1] >= v.h - 2) throw new Error(`the verdict (y ${v.verdict}) is under the sticky bar (y ${v.bar}): "${v.text}"`);
  if (v.verdict[0] < 0 || v.verdict[1] > v.h) throw new Error(`the verdict is off the screen: ${JSON.stringify(v)}`);
  await t.shot("write-it-layout-verdict-1280.png");
  t.ok(`basics/2's verdict at y ${Math.round(v.verdict[0])}-${Math.round(v.verdict[1])}, the bar from y ${Math.round(v.bar[0])}: "${v.text.slice(0, 60)}…"`);

  // A phone: the step's place and title.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(500);
  const seen = await page.evaluate(() => {
    const shown = (sel) => {
      const e = document.querySelector(sel);
      if (!e) return "";
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden" ? e.textContent.trim() : "";
    };
    return { name: shown(".topbar h1"), place: shown(".tour-place"), title: shown(".tour-title") };
  });
  if (!/step 2 of \d+/.test(seen.place)) throw new Error(`on a phone the step's place is not shown: ${JSON.stringify(seen)}`);
  if (!seen.title) throw new Error(`on a phone the step's title is not shown: ${JSON.stringify(seen)}`);
  await page.evaluate(() => scrollTo(0, 0));
  await t.shot("write-it-layout-phone.png");
  t.ok(`on a phone: "${seen.place}", "${seen.title}"`);

  // A phone, on the level with the longest name: the level picker shows
  // all of it ("A solid answer" was cut to "A solid a…") and the step's
  // count beside it is whole, on the screen (boxes, not pixels).
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/solid/2`, { waitUntil: "load" });
  await untilStep(page, "solid/2");
  await page.evaluate(() => scrollTo(0, 0));
  const level = await pickerWidths(page, '[data-control="tour-level"]');
  const head = await page.evaluate(() => {
    const place = document.querySelector(".tour-place");
    const b = (e) => e.getBoundingClientRect();
    return {
      place: place.textContent.trim(),
      placeCut: place.scrollWidth > place.clientWidth + 1,
      placeRight: b(place).right,
      headRight: Math.max(...[...document.querySelector(".tour-head").children].filter((e) => e.getClientRects().length).map((e) => b(e).right)),
      view: innerWidth,
    };
  });
  if (level.has + 0.5 < level.need) throw new Error(`on a phone the level picker cuts "${level.name}": ${level.has.toFixed(1)} px for ${level.need.toFixed(1)}`);
  if (head.placeCut || head.placeRight > head.view || head.headRight > head.view) throw new Error(`on a phone the step's count is cut: ${JSON.stringify(head)}`);
  await t.shot("write-it-layout-phone-solid.png");
  t.ok(`on a phone the level picker holds "${level.name}" (${Math.round(level.has)} px for ${Math.round(level.need)}) and "${head.place}" ends at x ${Math.round(head.placeRight)} of ${head.view}`);

  // A phone, "Write it yourself": the floating Fleet / Code switch covers
  // none of its blocks, wherever the list is scrolled to.
  await t.open("assemble=1&seed=1");
  await page.waitForSelector("[data-assemble] li[data-block]", { timeout: 30_000 });
  const blocks = await page.locator("[data-assemble] li[data-block]").count();
  for (let i = 0; i < blocks; i++) {
    await page.locator("[data-assemble] li[data-block]").nth(i).evaluate((e) => e.scrollIntoView({ block: "end" }));
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))));
    const hit = await page.evaluate(() => {
      const tabs = document.querySelector(".code-tabs");
      if (!tabs || !tabs.getClientRects().length || getComputedStyle(tabs).visibility === "hidden") return null;
      const a = tabs.getBoundingClientRect();
      for (const li of document.querySelectorAll("[data-assemble] li[data-block]")) {
        const b = li.getBoundingClientRect();
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) return { block: li.dataset.block, tabs: [a.top, a.bottom], li: [b.top, b.bottom] };
      }
      return null;
    });
    if (hit) throw new Error(`on a phone the Fleet / Code switch covers the block ${JSON.stringify(hit)}`);
  }
  await t.shot("write-it-layout-phone-assemble.png");
  t.ok(`on a phone the Fleet / Code switch covers none of the ${blocks} blocks, each scrolled to the foot of the screen`);

  // 1280 x 720, the code beside the fleet: the Follow picker shows the
  // whole name of whom it follows, each choice in turn ("the first thread
  // of office 1" was cut at 12em), and its label is inside the panel and
  // the screen.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`${process.env.E2E_URL}?i=3&t=4&seed=1#tour/basics/3`, { waitUntil: "load" });
  await untilStep(page, "basics/3");
  const picks = await page.locator('[data-control="follow"] option').evaluateAll((os) => os.map((o) => o.value));
  for (const value of picks) {
    await page.locator('[data-control="follow"]').selectOption(value);
    const f = {
      ...(await pickerWidths(page, '[data-control="follow"]')),
      ...(await page.evaluate(() => {
        const b = (e) => e.getBoundingClientRect();
        return { label: b(document.querySelector('[data-control="follow"]').closest("label")), panel: b(document.querySelector("[data-code-panel]")), view: innerWidth };
      })),
    };
    if (f.has + 0.5 < f.need) throw new Error(`at 1280x720 the Follow picker is squeezed below its names' width (showing "${f.name}"): ${f.has.toFixed(1)} px for ${f.need.toFixed(1)}`);
    if (f.label.left < f.panel.left - 1 || f.label.right > f.panel.right + 1 || f.label.right > f.view) throw new Error(`at 1280x720 the Follow label runs out of its panel: ${JSON.stringify(f)}`);
  }
  await t.shot("write-it-layout-follow-1280x720.png");
  t.ok(`at 1280x720 the Follow picker shows each of its ${picks.length} choices whole, inside its panel`);

  // No field names: every counter in words, the details opened.
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const q of ["preset=burst&seed=1", "preset=holder-crash&seed=1"]) {
    await t.open(q);
    await page.keyboard.press("End");
    await page.waitForTimeout(1500);
    const raw = await page.evaluate(() => {
      for (const d of document.querySelectorAll("details")) d.open = true;
      // Script files keep their names (claim_fenced.lua).
      return [...new Set([...document.body.innerText.matchAll(/\b[a-z0-9]+_[a-z0-9_]+\b(?!\.lua)/g)].map((m) => m[0]))];
    });
    if (raw.length) throw new Error(`${q}: field names shown to a person: ${raw.join(", ")}`);
  }
  t.ok("no counter shows its field name (burst, holder-crash, every details open)");

  // The clock: "stopped there" only once it stands there.
  await t.open("preset=naive&seed=1&speed=0.05");
  await page.locator(control("play")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > 5, null, { timeout: 30_000 });
  const playing = (await page.locator(".clock .of").textContent()).trim();
  if (/stopped there/.test(playing)) throw new Error(`while the run plays the clock says "${playing}"`);
  await page.keyboard.press("End");
  await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false", null, { timeout: 30_000 });
  await page.waitForTimeout(500);
  const end = (await page.locator(".clock .of").textContent()).trim();
  if (/where the lab stops it/.test(playing) !== /stopped there/.test(end)) throw new Error(`the clock said "${playing}" while playing and "${end}" at the end`);
  t.ok(`the clock while playing: "${playing}"; at the end: "${end}"`);

  // solid/5: its claim attempts explained, the run's number.
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/solid/5`, { waitUntil: "load" });
  await untilStep(page, "solid/5");
  await page.waitForFunction(() => document.querySelector('[data-control="predict-show"]')?.offsetParent, null, { timeout: 30_000 });
  await page.locator(control("predict-show")).click();
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  await t.untilEnd(90_000);
  await page.waitForTimeout(500);
  const words = (await page.locator(".tour-text").textContent()).trim();
  const attempts = await t.text("claim_attempts");
  if (!words.includes(`${attempts} claim attempts`) || !/claim again/.test(words)) throw new Error(`solid/5 does not explain its ${attempts} claim attempts: "${words}"`);
  t.ok(`solid/5: "${words.slice(words.indexOf("A losing"))}"`);
  t.noProblems("write-it-layout");
});
