// Issue 40, defect 2: a trainer's 13-item list walked with Page Down in
// presenter mode at 1280 x 720 and 1920 x 1080, each tour step's vote
// revealed (Space) and every item run to its end (End): the arithmetic's
// three rows whole on the screen and clear of the list's strip (the strip
// once sat over the side column and hid the "+ claim" row, the slide's
// lesson, or the best row), and every one of the strip's 13 buttons whole
// on the screen (the last was cut at the right edge). Screenshots of the
// tallest steps. No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

const b64 = (s) => Buffer.from(s, "utf8").toString("base64url");
const ITEMS = [
  "t:basics/1", "t:basics/2", "t:basics/3", "t:basics/4", "t:basics/5", "t:basics/6",
  "t:solid/3", "t:deeper/12", "s:preset=jitter&c=inner", "t:solid/1", "t:solid/5", "t:deeper/1", "t:deeper/3",
];
const list = ITEMS.map(b64).join(".");

const look = (page) =>
  page.evaluate(() => {
    const r = (e) => {
      const b = e.getBoundingClientRect();
      return { top: b.top, bottom: b.bottom, left: b.left, right: b.right, w: b.width, h: b.height };
    };
    const strip = document.querySelector("[data-playlist-strip]");
    return {
      vw: innerWidth,
      vh: innerHeight,
      strip: strip ? r(strip) : null,
      buttons: strip ? [...strip.querySelectorAll("[data-playlist-item] button")].map(r) : [],
      rows: [...document.querySelectorAll(".arith tbody tr[data-row]")].map((tr) => ({ row: tr.dataset.row, ...r(tr) })),
      scrollY,
    };
  });

const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

await spec("room-arithmetic", async (t) => {
  const { page } = t;
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(`${baseUrl}?list=${list}&item=1&present=1`, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    for (let k = 1; k <= ITEMS.length; k++) {
      if (k > 1) {
        await page.keyboard.press("PageDown");
        await page.waitForFunction((k) => new URLSearchParams(location.search).get("item") === String(k), k, { timeout: 30_000 });
      }
      if (ITEMS[k - 1].startsWith("t:")) {
        await page.waitForFunction((s) => document.querySelector("[data-tour-step]")?.dataset.tourStep === s, ITEMS[k - 1].slice(2), { timeout: 30_000 });
        const asking = await page.locator("[data-predict-option]").first().isVisible();
        if (asking) {
          await page.keyboard.press(" ");
          await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
        }
      }
      await page.keyboard.press("End");
      await page.waitForFunction(() => document.querySelectorAll(".arith tbody tr[data-row]").length === 3 && document.querySelector(".arithmetic").offsetHeight > 0, null, { timeout: 60_000 });
      await page.waitForTimeout(700);
      const b = await look(page);
      const why = `${w}x${h} item ${k} (${ITEMS[k - 1]})`;
      if (!b.strip) throw new Error(`${why}: no strip`);
      for (const row of b.rows) {
        const seen = Math.max(0, Math.min(row.bottom, b.vh, b.strip.top > row.top && overlaps(row, b.strip) ? b.strip.top : Infinity) - Math.max(row.top, 0)) / row.h;
        if (seen < 0.999) throw new Error(`${why}: the ${row.row} row is ${Math.round(seen * 100)} % visible (row ${Math.round(row.top)}-${Math.round(row.bottom)} px, strip from ${Math.round(b.strip.top)} px, screen ${b.vh} px)`);
      }
      if (b.buttons.length !== ITEMS.length) throw new Error(`${why}: the strip has ${b.buttons.length} buttons`);
      const cut = b.buttons.findIndex((x) => x.right > b.vw + 0.5 || x.left < -0.5 || x.bottom > b.vh + 0.5 || x.w < 10);
      if (cut >= 0) throw new Error(`${why}: the strip's button ${cut + 1} ${JSON.stringify(b.buttons[cut])} is cut (screen ${b.vw} px wide)`);
      if (b.scrollY !== 0) throw new Error(`${why}: the page scrolled ${b.scrollY} px`);
      if ([4, 7, 8].includes(k)) await page.screenshot({ path: path.join(shots, `room-arithmetic-${k}-${w}x${h}.png`) });
    }
    t.ok(`${w}x${h}: 13 items walked with Page Down, each vote revealed and run to its end: the arithmetic's 3 rows whole above the strip, its 13 buttons on the screen`);
  }
  t.noProblems("the list");
});
