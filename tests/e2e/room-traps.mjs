// Issue 40, defect 5: the traps before class.
// 1. "Skip predictions" clicked in a rehearsal holds for that tab only: the
//    class, opened in a new tab with present=1, asks the question (the
//    click was once kept for good and the class opened with the answers).
// 2. basics/1 run to its end: the arithmetic's "best" sits on the row with
//    the fewest recomputes, every row's run to its own end (the rows' runs
//    once stopped at the slide's end and "none" (12) read best above
//    singleflight (3)).
// 3. The list editor at 390 x 844: each item's words keep a readable width
//    (once squeezed to a 13-25 px column by the item's controls).
// No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

const firstFrame = (page) => page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });

await spec("room-traps", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  // 1. The rehearsal skips; the class asks.
  await page.goto(`${baseUrl}#tour/basics/1`, { waitUntil: "load" });
  await firstFrame(page);
  await page.locator('[data-control="predict-skip"]').click();
  await page.waitForFunction(() => !document.querySelector("[data-predict-option]")?.offsetParent);
  await page.reload();
  await firstFrame(page);
  await page.waitForTimeout(800);
  if (await page.locator("[data-predict-option]").first().isVisible()) throw new Error("a reload in the rehearsal's tab asks again: the skip is not kept for the tab");
  t.ok("Skip predictions holds in the rehearsal's tab over a reload");
  const room = await page.context().newPage();
  await room.setViewportSize({ width: 1280, height: 720 });
  await room.goto(`${baseUrl}?present=1#tour/basics/1`, { waitUntil: "load" });
  await firstFrame(room);
  await room.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 10_000 }).catch(async () => {
    const kept = await room.evaluate(() => ({ local: localStorage.getItem("stampede-skip-predictions"), tab: sessionStorage.getItem("stampede-skip-predictions") }));
    throw new Error(`the class, opened in a new tab in presenter mode, shows no question: the rehearsal's skip was kept (${JSON.stringify(kept)})`);
  });
  t.ok("the class, opened in a new tab with present=1, asks basics/1's question");

  // 2. basics/1's rows at its end.
  await room.keyboard.press(" ");
  await room.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  await room.keyboard.press("End");
  const rows = await room
    .waitForFunction(
      () => {
        const rows = [...document.querySelectorAll(".arith tbody tr[data-row]")].map((tr) => ({
          row: tr.dataset.row,
          n: Number(tr.querySelector(".measured .num")?.textContent.replace(/[^0-9]/g, "")),
          best: tr.dataset.best === "1",
          text: tr.textContent.replace(/\s+/g, " ").trim(),
        }));
        return rows.length === 3 && rows.every((r) => !/so far/.test(r.text)) && rows.some((r) => r.best) ? rows : null;
      },
      null,
      { timeout: 60_000 },
    )
    .then((h) => h.jsonValue())
    .catch(async () => {
      throw new Error(`basics/1 at its end: no row reads best once every row's run ended: ${await room.locator(".arith tbody").textContent()}`);
    });
  const best = rows.find((r) => r.best);
  const least = Math.min(...rows.map((r) => r.n));
  if (best.n !== least) throw new Error(`basics/1 at its end: "${best.text}" reads best above ${JSON.stringify(rows.map((r) => r.text))}`);
  t.ok(`basics/1 at its end: best is "${best.text}" (${rows.map((r) => r.n).join(", ")} recomputes)`);
  await room.close();

  // 3. The list editor on a phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${baseUrl}?preset=burst`, { waitUntil: "load" });
  await firstFrame(page);
  await page.evaluate(() => localStorage.removeItem("stampede-playlist"));
  for (const want of [1, 2]) {
    await page.locator("[data-playlist-add]").first().dispatchEvent("click");
    await page.waitForFunction((n) => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === n, want);
  }
  const widths = await page.$$eval("[data-playlist] [data-playlist-item]", (lis) =>
    lis.map((li) => ({ words: li.querySelector(".playlist-words").getBoundingClientRect().width, li: li.getBoundingClientRect().width })),
  );
  const narrow = widths.filter((w) => w.words < 0.6 * w.li);
  if (narrow.length) throw new Error(`390x844: the list editor squeezes an item's words to ${narrow.map((w) => Math.round(w.words)).join(", ")} px of ${Math.round(narrow[0].li)} px`);
  await page.locator("[data-playlist]").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, "room-traps-editor-390x844.png") });
  t.ok(`390x844: each item's words ${widths.map((w) => Math.round(w.words)).join(", ")} px wide in ${Math.round(widths[0].li)} px items`);
  t.noProblems("the traps");
});
