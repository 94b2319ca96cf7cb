// A trainer's playlist (issue 18 §4): a list of four kinds of view is built
// from the page ("Add this view": a tour step, a scenario paused at a
// moment, the A/B view, a drill), reordered and trimmed in the editor; its
// one link, opened fresh in presenter mode, steps with Page Down / Page Up
// (what a clicker sends): each item shows its view at its moment, the strip
// marks the current one, Back returns to the previous item; a damaged
// list= is said, naming the item, and the good items stay. The strip keeps
// out of the fleet's room and off every number the room reads at
// 1280 x 720 and 1920 x 1080. No console errors.
import { control, spec, shots, baseUrl } from "./lib/harness.mjs";
import path from "node:path";

const firstFrame = (page) => page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
const tourStep = (page) => page.evaluate(() => (document.querySelector("section.tour")?.hidden ? null : document.querySelector("[data-tour-step]")?.dataset.tourStep ?? null));
const editorItems = (page) => page.$$eval("[data-playlist] [data-playlist-item]", (lis) => lis.map((li) => ({ text: li.textContent, current: li.hasAttribute("data-current") })));
const strip = (page) =>
  page.evaluate(() => {
    const s = document.querySelector("[data-playlist-strip]");
    if (!s) return null;
    return {
      items: s.querySelectorAll("[data-playlist-item]").length,
      current: [...s.querySelectorAll("[data-playlist-item][data-current]")].map((li) => li.dataset.playlistItem),
      now: s.querySelector(".playlist-now")?.textContent ?? "",
    };
  });
const untilCurrent = (page, k) =>
  page
    .waitForFunction(
      (k) => {
        const cur = [...document.querySelectorAll("[data-playlist-strip] [data-playlist-item][data-current]")];
        return cur.length === 1 && cur[0].dataset.playlistItem === String(k) && new URLSearchParams(location.search).get("item") === String(k);
      },
      k,
      { timeout: 30_000 },
    )
    .catch(async () => {
      throw new Error(`the strip does not mark item ${k}: ${JSON.stringify(await strip(page))}, ${await page.evaluate(() => location.search)}`);
    });
const now = (page) => page.evaluate(() => document.querySelector('[data-metric="now_ms"]')?.textContent.trim());
const add = async (page, want) => {
  const before = (await editorItems(page)).length;
  await page.locator("[data-playlist-add]").click();
  await page.waitForFunction((n) => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === n, before + 1);
  const items = await editorItems(page);
  const last = items[items.length - 1].text;
  if (!want.test(last)) throw new Error(`item ${items.length} reads ${JSON.stringify(last)}, not ${want}`);
  return last;
};

const boxes = (page) =>
  page.evaluate(() => {
    const r = (el) => {
      if (!el) return null;
      const b = el.getBoundingClientRect();
      return { top: b.top, left: b.left, bottom: b.bottom, right: b.right, w: b.width, h: b.height };
    };
    const q = (s) => document.querySelector(s);
    return {
      strip: r(q("[data-playlist-strip]")),
      canvas: r(q(".stage .stage-canvas canvas")),
      numbers: [
        ["proof", r(q(".proof-value"))],
        ...["redis", "origin", "clock"].map((n) => [n, r(q(`[data-room="${n}"] dd`))]),
        ...[...document.querySelectorAll(".arith tbody tr[data-row]")].map((tr, i) => [`row ${i + 1}`, r(tr)]),
        ...[...document.querySelectorAll(".stage .legend li")].map((li, i) => [`legend ${i + 1}`, r(li)]),
      ],
    };
  });
const inside = (b, vw, vh) => b && b.top >= -1 && b.left >= -1 && b.bottom <= vh + 1 && b.right <= vw + 1 && b.w > 0 && b.h > 0;
const overlap = (a, b) => a && b && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;

/// The projector's first screen with the strip on it: everything the room
/// reads is on screen and the strip covers none of it.
/// A tour step's words, or a drill's situation and goals (a band of their
/// own, scrolling), take the top of the screen: there the fleet keeps over
/// half of it.
async function projector(t, w, h, name, fleetShare = 0.6) {
  const b = await boxes(t.page);
  if (!inside(b.strip, w, h)) throw new Error(`${w}x${h}: the strip ${JSON.stringify(b.strip)} is off screen`);
  // Three lines of caption at most: the band the room's layout keeps for it.
  if (b.strip.h > 72) throw new Error(`${w}x${h}: the strip is ${b.strip.h}px tall: not a small strip`);
  if (!inside(b.canvas, w, h) || b.canvas.h < fleetShare * h) throw new Error(`${w}x${h}: the fleet ${JSON.stringify(b.canvas)} lost its room`);
  if (overlap(b.strip, b.canvas)) throw new Error(`${w}x${h}: the strip covers the fleet`);
  for (const [n, x] of b.numbers) {
    if (!inside(x, w, h)) throw new Error(`${w}x${h}: ${n} ${JSON.stringify(x)} is off the first screen`);
    if (overlap(b.strip, x)) throw new Error(`${w}x${h}: the strip covers ${n}`);
  }
  await t.shot(`room-playlist-${name}-${w}x${h}.png`);
  t.ok(`${w}x${h} (${name}): the strip (${Math.round(b.strip.w)}x${Math.round(b.strip.h)}) covers nothing; the fleet (${Math.round(b.canvas.h)}px tall) and ${b.numbers.length} numbers and legend entries on the first screen`);
}

// The A/B view's one clock reads `ms` ("t = 300.0 ms at …"), paused.
async function abAt(page, ms) {
  try {
    await page.waitForFunction((ms) => document.querySelector(".ab .clock")?.textContent.startsWith(`t = ${ms} ms`), ms, { timeout: 30_000 });
  } catch {
    throw new Error(`the A/B view's clock reads ${await page.locator(".ab .clock").first().textContent()}, not ${ms} ms`);
  }
}

await spec("room-playlist", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });

  // Building: a tour step, a scenario paused at a moment, the A/B view, a drill.
  await page.goto(`${baseUrl}#tour/basics/2`);
  await firstFrame(page);
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "basics/2");
  // In the tour the room's switches, "Add this view" with them, wait
  // behind "More".
  await page.locator('[data-control="more-controls"]').click();
  await page.waitForSelector('[data-control="playlist-add"]');
  const stepTitle = (await page.locator("[data-tour-step] .tour-title, .tour-title").first().textContent()).trim();
  await page.locator('[data-control="playlist-add"]').click();
  await page.waitForFunction(() => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === 1, null, { timeout: 30_000 });
  const first = (await editorItems(page))[0].text;
  if (!/^Tour step: /.test(first)) throw new Error(`item 1 reads ${JSON.stringify(first)}`);
  if ((await page.evaluate(() => document.querySelector("[data-tour-step]")?.dataset.tourStep)) !== "basics/2") throw new Error("adding the view left the step");
  t.ok(`"Add this view" on tour step basics/2 adds it (${stepTitle})`);
  await page.locator(control("playlist-clear")).click();
  await page.waitForFunction(() => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === 0);
  if (!(await page.locator("[data-playlist-add]").isVisible())) await page.locator('[data-control="more-controls"]').click();
  await page.waitForSelector("[data-playlist-add]");
  if (await page.locator("[data-playlist]").isVisible()) throw new Error("an empty list's editor is shown");
  await add(page, /^Tour step: /);
  t.ok("and again after Clear");

  await t.open("preset=burst&at=120");
  await t.expectMetric("now_ms", "120.0", "the sandbox waits at 120 ms");
  await add(page, /^Scenario: .*at 120 ms, paused/);
  // The A/B view from the sandbox's button, then its own clock at a
  // link's moment: an A/B item keeps its moment as the others do.
  await page.locator('[data-control="compare"]').first().click();
  await page.waitForSelector(".ab-side");
  await t.open("cmp=layered&at=100");
  await page.waitForSelector(".ab-side");
  await abAt(page, "100.0");
  await add(page, /^A\/B view: .* vs .*, at 100 ms, paused/);
  await t.open("drill=singleflight-alone");
  await page.waitForSelector("[data-drill]");
  await add(page, /^Drill: /);
  // One more, to remove; then a move down and back up.
  await t.open("preset=naive");
  await add(page, /^Scenario: /);
  let items = await editorItems(page);
  if (items.length !== 5) throw new Error(`${items.length} items in the editor`);
  if (!items[4].current || items.slice(0, 4).some((i) => i.current)) throw new Error(`the editor does not mark the view on screen: ${JSON.stringify(items)}`);
  t.ok("the editor marks the item on screen (data-current)");
  await page.locator('[data-playlist] [data-control="playlist-remove"][data-k="4"]').click();
  await page.locator('[data-playlist] [data-control="playlist-down"][data-k="0"]').click();
  items = await editorItems(page);
  if (items.length !== 4 || !/^Scenario/.test(items[0].text) || !/^Tour step/.test(items[1].text)) throw new Error(`remove and reorder: ${JSON.stringify(items)}`);
  await page.locator('[data-playlist] [data-control="playlist-up"][data-k="1"]').click();
  items = await editorItems(page);
  const kinds = items.map((i) => i.text.split(":")[0]);
  if (kinds.join() !== "Tour step,Scenario,A/B view,Drill") throw new Error(`the list reads ${kinds}`);
  t.ok(`the editor removes and reorders: ${kinds.join(", ")}`);
  // An item's moment is edited: typed in, paused or playing, or the start.
  const item2 = async () => (await editorItems(page))[1].text;
  const was = await item2();
  const at = page.locator('[data-playlist] [data-playlist-at][data-k="1"]');
  await at.fill("300");
  await at.press("Enter");
  await at.blur();
  await page.waitForFunction(() => /at 300 ms, paused/.test(document.querySelectorAll("[data-playlist] [data-playlist-item]")[1]?.textContent ?? ""), null, { timeout: 10_000 });
  // Its buttons say what they do in characters every font has: no media
  // glyph of the Miscellaneous Technical block (U+2300-23FF: ⏸ ⏮ drew as
  // boxes in headless Chromium's fonts).
  const glyphs = await page.locator("[data-playlist] [data-playlist-item] button").evaluateAll((bs) => bs.map((b) => b.textContent));
  const boxed = glyphs.filter((g) => /[\u2300-\u23ff]/.test(g));
  if (boxed.length) throw new Error(`the editor's buttons use glyphs fonts may lack: ${JSON.stringify(boxed)}`);
  await page.locator('[data-playlist] [data-control="playlist-pause"][data-k="1"]').click();
  if (!/from 300 ms, playing/.test(await item2())) throw new Error(`play from the moment: ${await item2()}`);
  await page.locator('[data-playlist] [data-control="playlist-start"][data-k="1"]').click();
  if (!/from its start/.test(await item2())) throw new Error(`from the start: ${await item2()}`);
  await at.fill("");
  await at.blur();
  await page.waitForFunction(() => /a moment is a whole number of ms/.test(document.querySelector("[data-playlist] .playlist-status")?.textContent ?? ""), null, { timeout: 10_000 });
  const back = page.locator('[data-playlist] [data-playlist-at][data-k="1"]');
  await back.fill("120");
  await back.blur();
  await page.waitForFunction(() => /at 120 ms, paused/.test(document.querySelectorAll("[data-playlist] [data-playlist-item]")[1]?.textContent ?? ""), null, { timeout: 10_000 });
  t.ok(`an item's moment is edited: 300 ms paused, playing from there, its start, a bad entry said, then back to "${(await item2()).match(/at 120 ms, paused/)[0]}" (was "${was.match(/(at|from) \d+ ms, (paused|playing)|from its start/)?.[0]}")`);
  // Kept while being built: a reload finds it.
  await page.reload();
  await firstFrame(page);
  await page.waitForFunction(() => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === 4);
  await page.locator("[data-playlist]").scrollIntoViewIfNeeded();
  await t.shot("room-playlist-editor-1280x800.png");
  t.ok("the list is kept (localStorage) across a reload");
  const link = await page.locator("[data-playlist-link]").inputValue();
  if (!/[?&]list=[A-Za-z0-9_.-]+&item=1#tour\/basics\/2$/.test(link)) throw new Error(`the list's link is ${link}`);
  await page.locator('[data-control="playlist-copy"]').click();
  await page.waitForFunction(() => /Copied/.test(document.querySelector(".playlist-status")?.textContent));
  t.ok(`one link for the list (${link.length} characters), item 1's view first`);

  // Stepping it, fresh, in presenter mode on a projector.
  await page.setViewportSize({ width: 1280, height: 720 });
  const [before, hash] = link.split("#");
  await page.goto(`${before}&present=1#${hash}`);
  await firstFrame(page);
  if (!(await page.evaluate(() => document.body.classList.contains("presenter")))) throw new Error("present=1 is not presenter mode");
  await untilCurrent(page, 1);
  if ((await tourStep(page)) !== "basics/2") throw new Error(`item 1 shows tour step ${await tourStep(page)}`);
  const s = await strip(page);
  if (s.items !== 4 || !s.now.includes("1 of 4") || !s.now.includes("Tour step")) throw new Error(`the strip: ${JSON.stringify(s)}`);
  if (await page.locator("[data-playlist]").isVisible()) throw new Error("the editor shows in presenter mode");
  t.ok(`item 1: tour step basics/2; the strip reads "${s.now}"`);
  await projector(t, 1280, 720, "tour", 0.55);
  // An arrow takes the tour to its next step: the view on screen is no
  // longer item 1's, and the strip says so; back, and it is again.
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => document.querySelector("[data-playlist-strip]")?.hasAttribute("data-changed"), null, { timeout: 10_000 });
  const changed = (await strip(page)).now;
  if (!/^1 of 4, changed/.test(changed)) throw new Error(`the strip says ${JSON.stringify(changed)} once the view changed`);
  await page.keyboard.press("ArrowLeft");
  await page.waitForFunction(() => !document.querySelector("[data-playlist-strip]")?.hasAttribute("data-changed"), null, { timeout: 10_000 });
  if ((await tourStep(page)) !== "basics/2") throw new Error(`back is tour step ${await tourStep(page)}`);
  t.ok(`the strip says when the view on screen left the item ("${changed}") and when it is back`);
  // Inside a tour step, Page Down is the list's (the arrows are the tour's).
  await page.keyboard.press("PageDown");
  await untilCurrent(page, 2);
  await page.waitForFunction(() => document.querySelector('[data-metric="now_ms"]')?.textContent.trim() === "120.0", null, { timeout: 30_000 });
  await page.waitForTimeout(500);
  if ((await now(page)) !== "120.0" || (await page.locator('[data-control="play"]').getAttribute("aria-pressed")) !== "false") throw new Error(`item 2 is not paused at 120 ms: ${await now(page)}`);
  if ((await tourStep(page)) !== null) throw new Error("item 2 still shows the tour");
  t.ok("Page Down in the tour step: item 2, the sandbox paused at 120 ms");
  await projector(t, 1280, 720, "scenario");
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.waitForTimeout(500);
  await projector(t, 1920, 1080, "scenario");
  await page.setViewportSize({ width: 1280, height: 720 });

  await page.keyboard.press("PageDown");
  await untilCurrent(page, 3);
  await page.waitForSelector(".ab-side");
  await abAt(page, "100.0");
  await page.waitForTimeout(600);
  await t.shot("room-playlist-ab-1280x720.png");
  t.ok("Page Down: item 3, the A/B view paused at its moment, 100 ms");
  await page.goBack();
  await untilCurrent(page, 2);
  await page.waitForSelector(".ab-side", { state: "detached" });
  await page.waitForFunction(() => document.querySelector('[data-metric="now_ms"]')?.textContent.trim() === "120.0", null, { timeout: 30_000 });
  t.ok("Back: item 2 again, at 120 ms, marked on the strip");
  await page.goForward();
  await untilCurrent(page, 3);
  await page.waitForSelector(".ab-side");
  await page.keyboard.press("PageDown");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("item") === "4" && document.querySelector("[data-drill]"), null, { timeout: 30_000 });
  await firstFrame(page);
  await untilCurrent(page, 4);
  if (!(await page.evaluate(() => document.body.classList.contains("presenter")))) throw new Error("presenter mode is lost on the drill item");
  const banner = await page.locator('[role="alert"]').count();
  if (banner) throw new Error(`the drill item opens with a banner: ${await page.locator('[role="alert"]').textContent()}`);
  t.ok("Page Down: item 4, the drill, still in presenter mode, no notices");
  await page.keyboard.press("PageDown");
  await page.waitForTimeout(300);
  await untilCurrent(page, 4);
  await page.keyboard.press("PageUp");
  await untilCurrent(page, 3);
  await page.waitForSelector(".ab-side");
  await page.goBack();
  await untilCurrent(page, 4);
  await page.waitForSelector("[data-drill]");
  t.ok("Page Down at the last item stays; Page Up: item 3; Back: item 4");
  await projector(t, 1280, 720, "drill", 0.55);

  // A damaged list: said, naming the item, and the good ones kept.
  const list = new URL(before).searchParams.get("list");
  const parts = list.split(".");
  parts[1] = "zz!~";
  await page.goto(`${baseUrl}?list=${parts.join(".")}&item=1&present=1#tour/basics/2`);
  await firstFrame(page);
  const said = await page.locator('[role="alert"]').textContent();
  if (!/item 2 could not be read/.test(said)) throw new Error(`the banner says ${JSON.stringify(said)}`);
  const d = await strip(page);
  if (d.items !== 3) throw new Error(`a damaged list keeps ${d.items} items`);
  await page.keyboard.press("PageDown");
  await untilCurrent(page, 2);
  await page.waitForSelector(".ab-side");
  t.ok(`a damaged list= is said ("${said.match(/item 2[^.;]*/)[0]}") and its 3 good items step on`);
  // A bare list link opens its first item.
  await page.goto(`${baseUrl}?list=${list}`);
  await page.waitForFunction(() => new URLSearchParams(location.search).get("item") === "1" && location.hash === "#tour/basics/2", null, { timeout: 30_000 });
  await firstFrame(page);
  await untilCurrent(page, 1);
  t.ok("a bare list= link opens its first item");
  // A hand-edited item= on another item's view: the page opens the item's
  // view, so the strip's title is what is on screen.
  await page.goto(`${baseUrl}?list=${list}&item=3#tour/basics/2`);
  await page.waitForSelector(".ab-side", { timeout: 30_000 });
  await untilCurrent(page, 3);
  const edited = await strip(page);
  if (/changed/.test(edited.now)) throw new Error(`item=3 by hand: the strip says ${JSON.stringify(edited.now)}`);
  t.ok(`a hand-edited item=3 over item 1's view opens item 3's view: "${edited.now}"`);

  // Clear empties the editor.
  await page.goto(`${baseUrl}?preset=burst`);
  await firstFrame(page);
  // Presenter mode is remembered for the tab: p leaves it.
  await page.keyboard.press("p");
  await page.waitForFunction(() => !document.body.classList.contains("presenter"));
  await page.locator('[data-control="playlist-clear"]').click();
  await page.waitForFunction(() => document.querySelector("[data-playlist]")?.hidden);
  if (await page.evaluate(() => localStorage.getItem("stampede-playlist"))) throw new Error("Clear leaves the stored list");
  t.ok("Clear empties the list and forgets it");
  t.noProblems("at the end");
});
