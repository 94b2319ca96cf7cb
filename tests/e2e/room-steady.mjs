// Issue 40, defect 3: in presenter mode a move of the mouse brings the
// controls back over the slide, not into it: the tour's words, the fleet
// and the arithmetic stay where they were, all three rows on the screen
// (the tour bar once grew from 209 to 345 px for the 2.5 s the controls
// showed, and the arithmetic left the screen). The `?` keys overlay sits
// inside the screen and every key it lists can be brought into view in it
// (it once started 300-800 px above the screen and could not scroll, so
// Space, Page Down, End, 1 to 5 and A to D never showed), at 1280 x 720
// and 1920 x 1080. No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

const layout = (page) =>
  page.evaluate(() => {
    const r = (e) => {
      const b = e.getBoundingClientRect();
      return [Math.round(b.top), Math.round(b.bottom), Math.round(b.left), Math.round(b.right)];
    };
    return {
      tour: r(document.querySelector("section.tour")),
      canvas: r(document.querySelector(".stage .stage-canvas canvas")),
      rows: [...document.querySelectorAll(".arith tbody tr[data-row]")].map(r),
      proof: r(document.querySelector(".proof-value")),
      vh: innerHeight,
    };
  });

await spec("room-steady", async (t) => {
  const { page } = t;
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.goto(`${baseUrl}?present=1#tour/basics/3`, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
    await page.keyboard.press(" ");
    await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
    await page.keyboard.press("End");
    await page.waitForFunction(() => document.querySelectorAll(".arith tbody tr[data-row]").length === 3 && document.body.classList.contains("pointer-idle"), null, { timeout: 60_000 });
    await page.waitForTimeout(500);
    const still = await layout(page);
    if (still.rows.some(([top, bottom]) => top < 0 || bottom > still.vh)) throw new Error(`${w}x${h}: at rest an arithmetic row is off the screen: ${JSON.stringify(still.rows)}`);
    await page.mouse.move(300, 300);
    await page.mouse.move(330, 320);
    await page.waitForFunction(() => !document.body.classList.contains("pointer-idle"));
    for (const when of ["at once", "a second later"]) {
      if (when !== "at once") await page.waitForTimeout(1000);
      const moved = await layout(page);
      if (await page.evaluate(() => document.body.classList.contains("pointer-idle"))) break;
      for (const k of ["tour", "canvas", "proof"]) {
        if (JSON.stringify(moved[k]) !== JSON.stringify(still[k])) throw new Error(`${w}x${h}, ${when} after a mouse move: the ${k} went from ${JSON.stringify(still[k])} to ${JSON.stringify(moved[k])}`);
      }
      if (JSON.stringify(moved.rows) !== JSON.stringify(still.rows)) throw new Error(`${w}x${h}, ${when} after a mouse move: the arithmetic's rows went from ${JSON.stringify(still.rows)} to ${JSON.stringify(moved.rows)}`);
    }
    await page.screenshot({ path: path.join(shots, `room-steady-pointer-${w}x${h}.png`) });
    t.ok(`${w}x${h}: a mouse move brings the controls over the slide; the tour bar (${still.tour[1] - still.tour[0]} px), the fleet, the proof and the 3 rows stay put`);

    // The keys overlay.
    await page.keyboard.press("?");
    await page.locator(".shortcuts").waitFor({ state: "visible" });
    const want = ["Space or .", "→ or Page Down", "End", "1 to 5", "A to D (Shift: take one back)", "?", "Esc"];
    const seen = await page.evaluate((want) => {
      const o = document.querySelector(".shortcuts");
      const ob = o.getBoundingClientRect();
      const out = { box: [ob.top, ob.bottom], keys: {} };
      for (const dt of o.querySelectorAll("dt")) {
        if (!want.includes(dt.textContent)) continue;
        dt.scrollIntoView({ block: "nearest" });
        const b = dt.getBoundingClientRect();
        const o2 = o.getBoundingClientRect();
        const top = document.elementFromPoint(b.left + 2, (b.top + b.bottom) / 2);
        out.keys[dt.textContent] = b.top >= Math.max(0, o2.top) - 0.5 && b.bottom <= Math.min(innerHeight, o2.bottom) + 0.5 && (top === dt || dt.contains(top));
      }
      return out;
    }, want);
    if (seen.box[0] < 0 || seen.box[1] > h) throw new Error(`${w}x${h}: the keys overlay spans ${seen.box.map(Math.round)} px of a ${h} px screen`);
    const hidden = want.filter((k) => !seen.keys[k]);
    if (hidden.length) throw new Error(`${w}x${h}: in the keys overlay ${hidden.join(", ")} cannot be brought into view`);
    await page.evaluate(() => document.querySelector(".shortcuts").scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, `room-steady-keys-${w}x${h}.png`) });
    t.ok(`${w}x${h}: the keys overlay inside the screen (${seen.box.map(Math.round).join("-")} px); ${want.length} keys each brought into view in it`);
    await page.keyboard.press("Escape");
  }
  t.noProblems("presenter mode");
});
