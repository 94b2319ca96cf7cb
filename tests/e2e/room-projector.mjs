// Presenter mode on a projector (issue 18 §1): at 1280 x 720 and 1920 x 1080
// the fleet (with Redis and the origin), the proof, Redis's and the origin's
// counts, the clock, the arithmetic's rows and the legend all sit in the
// first screen; the hidden header takes no space and steps back at once;
// the key type is at least 32 px at 1280 x 720 and the proof's number is
// larger still; the room's theme is light by default and remembered;
// present=1 opens presenter mode and it stays on across the page's links.
import { control, spec, shots } from "./lib/harness.mjs";
import path from "node:path";

const boxes = (page) =>
  page.evaluate(() => {
    const r = (el) => {
      if (!el) return null;
      const b = el.getBoundingClientRect();
      return { top: b.top, left: b.left, bottom: b.bottom, right: b.right, w: b.width, h: b.height };
    };
    const fs = (el) => (el ? parseFloat(getComputedStyle(el).fontSize) : 0);
    const q = (s) => document.querySelector(s);
    const all = (s) => [...document.querySelectorAll(s)];
    return {
      vw: innerWidth,
      vh: innerHeight,
      canvas: r(q(".stage .stage-canvas canvas")),
      proof: r(q(".proof-value")),
      proofFont: fs(q(".proof-value")),
      proofLabelFont: fs(q(".proof-title .proof-label") ?? q(".proof-title")),
      rooms: ["redis", "origin", "clock"].map((n) => ({
        n,
        box: r(q(`[data-room="${n}"] dd`)),
        fonts: [fs(q(`[data-room="${n}"] dt`)), fs(q(`[data-room="${n}"] .room-value`)), fs(q(`[data-room="${n}"] .room-what`))],
        text: q(`[data-room="${n}"]`)?.textContent ?? "",
      })),
      arith: r(q(".arithmetic")),
      rows: all(".arith tbody tr[data-row]").map((tr) => ({
        box: r(tr),
        num: r(tr.querySelector(".measured .num")),
        fonts: [fs(tr.querySelector("th")), fs(tr.querySelector(".measured .num"))],
      })),
      legend: all(".stage .legend li").map(r),
      header: (() => {
        const h = q("header.topbar");
        return { visibility: getComputedStyle(h).visibility, position: getComputedStyle(h).position };
      })(),
      scrollY,
      theme: document.documentElement.className,
    };
  });

/// What, inside the panels `sel` shows, runs past its panel's or the
/// screen's sides (or makes the panel scroll sideways).
const spills = (page, sel) =>
  page.evaluate((sel) => {
    const out = [];
    const name = (e) => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")} "${e.textContent.trim().slice(0, 30)}"`;
    for (const panel of document.querySelectorAll(sel)) {
      if (!panel.offsetParent) continue;
      const p = panel.getBoundingClientRect();
      const [left, right] = [Math.max(p.left, 0), Math.min(p.right, innerWidth)];
      if (panel.scrollWidth > panel.clientWidth + 1) out.push(`${name(panel)} is ${panel.scrollWidth - panel.clientWidth}px too wide`);
      for (const e of panel.querySelectorAll("*")) {
        const r = e.getBoundingClientRect();
        if (r.width > 0 && (r.right > right + 1 || r.left < left - 1)) out.push(`${name(e)} at ${Math.round(r.left)}-${Math.round(r.right)}px (panel ${Math.round(left)}-${Math.round(right)})`);
      }
    }
    return out.slice(0, 8);
  }, sel);

const inside = (b, vw, vh) => b && b.top >= -1 && b.left >= -1 && b.bottom <= vh + 1 && b.right <= vw + 1 && b.w > 0 && b.h > 0;

await spec("room-projector", async (t) => {
  const { page } = t;
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await t.open("preset=burst&present=1");
    if (!(await page.evaluate(() => document.body.classList.contains("presenter")))) throw new Error("present=1 does not open presenter mode");
    await page.keyboard.press("End");
    await t.expectMetric("recomputes", "1", "the card's run ends at one recompute");
    await page.waitForTimeout(600);
    const b = await boxes(page);
    if (b.header.visibility !== "hidden" || b.header.position !== "fixed") throw new Error(`${w}x${h}: the header is ${b.header.visibility}, ${b.header.position}: not stepped back at once`);
    if (!inside(b.canvas, w, h) || b.canvas.top > 40) throw new Error(`${w}x${h}: the fleet's canvas ${JSON.stringify(b.canvas)}: hidden controls take space or it leaves the screen`);
    if (b.canvas.h < 0.6 * h) throw new Error(`${w}x${h}: the fleet is only ${b.canvas.h}px tall of ${h}`);
    if (!inside(b.proof, w, h)) throw new Error(`${w}x${h}: the proof ${JSON.stringify(b.proof)} is off screen`);
    for (const room of b.rooms) {
      if (!inside(room.box, w, h)) throw new Error(`${w}x${h}: ${room.n} ${JSON.stringify(room.box)} is off screen`);
      if (room.fonts.some((f) => f < 32)) throw new Error(`${w}x${h}: ${room.n}'s type is ${room.fonts} px, under 32`);
    }
    if (!/Redis\s*40\s*claim attempts/.test(b.rooms[0].text) || !/Origin\s*1\s*recompute/.test(b.rooms[1].text)) {
      throw new Error(`the room's numbers are not the run's: ${b.rooms.map((r) => r.text).join(" | ")}`);
    }
    if (b.rows.length !== 3) throw new Error(`${w}x${h}: ${b.rows.length} arithmetic rows`);
    for (const row of b.rows) {
      if (!inside(row.box, w, h)) throw new Error(`${w}x${h}: an arithmetic row ${JSON.stringify(row.box)} is off screen`);
      if (row.fonts.some((f) => f < 32)) throw new Error(`${w}x${h}: an arithmetic row's type is ${row.fonts} px`);
      // The count whole, inside its panel (a wide name once pushed 8000's
      // last digit off it).
      if (!row.num || row.num.right > b.arith.right + 0.5) throw new Error(`${w}x${h}: an arithmetic count ${JSON.stringify(row.num)} runs past its panel's edge (${b.arith.right})`);
    }
    const keyMax = Math.max(...b.rooms.flatMap((r) => r.fonts), ...b.rows.flatMap((r) => r.fonts));
    if (!(b.proofFont > keyMax)) throw new Error(`${w}x${h}: the proof's number (${b.proofFont}px) is not larger than the key type (${keyMax}px)`);
    if (b.proofLabelFont < 32) throw new Error(`${w}x${h}: the proof's label is ${b.proofLabelFont}px`);
    // The proof's box fills its panel (at 1920 x 1080 it was a short box
    // over a tall empty space in the panel).
    const gap = await page.evaluate(() => {
      const panel = document.querySelector(".proof-panel");
      const p = panel.getBoundingClientRect();
      const pad = parseFloat(getComputedStyle(panel).paddingBottom) + parseFloat(getComputedStyle(panel).borderBottomWidth);
      const box = document.querySelector(".proof-panel .proof").getBoundingClientRect();
      return { empty: p.bottom - pad - box.bottom, panel: p.height };
    });
    if (gap.empty > Math.max(24, 0.08 * gap.panel)) throw new Error(`${w}x${h}: the proof leaves ${Math.round(gap.empty)}px of its ${Math.round(gap.panel)}px panel empty under it`);
    if (b.legend.length < 10 || !b.legend.every((l) => inside(l, w, h))) throw new Error(`${w}x${h}: a legend entry is off screen`);
    if (b.scrollY !== 0) throw new Error(`the page scrolled ${b.scrollY}px`);
    if (!b.theme.includes("room-light")) throw new Error(`the room is not light by default: <html class="${b.theme}">`);
    t.ok(`${w}x${h}: fleet ${Math.round(b.canvas.w)}x${Math.round(b.canvas.h)}, proof, Redis, origin, clock, 3 rows and ${b.legend.length} legend entries on the first screen; key type ${Math.min(...b.rooms.flatMap((r) => r.fonts))}-${keyMax}px, proof ${b.proofFont}px`);
    await page.screenshot({ path: path.join(shots, `room-presenter-${w}x${h}.png`) });
    // Many keys: each row has its caveat ("n/a: keys expire again and
    // again"); the three rows still end above a list's strip (52 px).
    // Opened as a list's item, so the strip is in the corner.
    await t.open("preset=jitter&c=inner");
    await page.locator("[data-playlist-add]").first().dispatchEvent("click");
    const listed = await page.locator("[data-playlist-link]").inputValue();
    await page.evaluate(() => localStorage.clear());
    await page.goto(`${listed.split("#")[0]}&present=1`);
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame && document.querySelector("[data-playlist-strip]"), null, { timeout: 30_000 });
    // At the end, where the counts are longest.
    await page.keyboard.press("End");
    await t.untilEnd();
    await page.waitForTimeout(600);
    const many = await boxes(page);
    const strip = await page.locator("[data-playlist-strip]").boundingBox();
    if (many.rows.length !== 3 || !many.rows.every((r) => inside(r.box, w, strip.y))) {
      throw new Error(`${w}x${h} jitter: the rows ${JSON.stringify(many.rows.map((r) => r.box))} do not end above the list's strip at ${Math.round(strip.y)}px`);
    }
    t.ok(`${w}x${h}: with many keys the three rows (their caveats too) end above a list's strip (${Math.round(strip.y)}px)`);
  }

  // Mid-run a row reads "best so far": every count still whole in its panel.
  await page.setViewportSize({ width: 1280, height: 720 });
  await t.open("preset=burst&present=1&at=172");
  await page.waitForFunction(() => /best so far/.test(document.querySelector(".arith")?.textContent ?? ""), null, { timeout: 30_000 });
  const mid = await boxes(page);
  const cut = mid.rows.filter((r) => !r.num || r.num.right > mid.arith.right + 0.5);
  if (cut.length) throw new Error(`1280x720 mid-run: arithmetic counts ${JSON.stringify(cut.map((r) => r.num))} run past the panel's edge (${mid.arith.right})`);
  t.ok(`1280x720 mid-run ("best so far"): the ${mid.rows.length} counts end inside the arithmetic's panel`);

  // On the tour, with its question open: the same first screen.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(new URL("?present=1#tour/basics/1", page.url()).href);
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame);
  await page.waitForTimeout(800);
  for (const when of ["asking", "revealed"]) {
    if (when === "revealed") {
      // Space reveals; End runs the step's run to its end.
      await page.keyboard.press(" ");
      await page.keyboard.press("End");
      await page.waitForFunction(() => document.querySelectorAll(".arith tbody tr[data-row]").length === 3 && document.querySelector(".arithmetic").offsetHeight > 0, null, { timeout: 30_000 });
      await page.waitForTimeout(800);
    }
    const b = await boxes(page);
    if (when === "revealed" && b.rows.length !== 3) throw new Error(`on the tour: ${b.rows.length} rows after the reveal`);
    const off = [["fleet", b.canvas], ["proof", b.proof], ...b.rooms.map((r) => [r.n, r.box]), ...b.rows.map((r, i) => [`row ${i + 1}`, r.box]), ...b.legend.map((l, i) => [`legend ${i + 1}`, l])].filter(([, x]) => !inside(x, 1280, 720));
    if (off.length) throw new Error(`on the tour at 1280x720, off the first screen: ${off.map(([n, x]) => `${n} ${JSON.stringify(x)}`).join("; ")}`);
    if (!(b.proofFont > Math.max(...b.rooms.flatMap((r) => r.fonts)))) throw new Error(`on the tour the proof (${b.proofFont}px) is not the largest type`);
    // What the room reads to vote, and the verdict: at least 28 px here.
    const read = await page.evaluate((sel) => [...document.querySelectorAll(sel)].filter((e) => e.offsetParent).map((e) => [e.className || e.tagName, parseFloat(getComputedStyle(e).fontSize)]), when === "asking" ? ".tour-question, .tour-options button" : ".tour-verdict");
    if (!read.length) throw new Error(`on the tour (${when}): nothing to read for the vote`);
    const small = read.filter(([, f]) => f < 28);
    if (small.length) throw new Error(`on the tour at 1280x720 (${when}), under 28 px: ${JSON.stringify(small)}`);
    await page.screenshot({ path: path.join(shots, `room-presenter-tour-${when}-1280x720.png`) });
    t.ok(`on the tour at 1280x720 (${when}): the step's words, the fleet, the proof, the counts, ${b.rows.length} arithmetic rows (they wait while a question is open) and the legend on the first screen; the ${when === "asking" ? "question and options" : "verdict"} in ${Math.min(...read.map(([, f]) => f))} px type`);
  }
  // The same at 1920 x 1080: 40 px.
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.goto(new URL("?present=1#tour/basics/1", page.url()).href);
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame);
  await page.waitForTimeout(800);
  const big = await page.evaluate(() => [...document.querySelectorAll(".tour-question, .tour-options button")].filter((e) => e.offsetParent).map((e) => parseFloat(getComputedStyle(e).fontSize)));
  if (!big.length || big.some((f) => f < 40)) throw new Error(`on the tour at 1920x1080 the vote's type is ${big} px, under 40`);
  await page.screenshot({ path: path.join(shots, "room-presenter-tour-asking-1920x1080.png") });
  t.ok(`on the tour at 1920x1080: the question and options in ${Math.min(...big)} px type`);

  // A drill's situation and goals in the room's type at both sizes (they
  // were 12.8 px beside a 100 px proof).
  for (const [w, h, least] of [[1280, 720, 28], [1920, 1080, 40]]) {
    await page.setViewportSize({ width: w, height: h });
    await t.open("drill=jitter&present=1");
    await page.locator("[data-drill] .tour-text").waitFor({ state: "visible", timeout: 30_000 });
    const sizes = await page.evaluate(() =>
      [...document.querySelectorAll("[data-drill] .tour-text, [data-drill] .drill-goals li")].map((e) => parseFloat(getComputedStyle(e).fontSize)),
    );
    if (!(sizes.length >= 2 && Math.min(...sizes) >= least)) throw new Error(`${w}x${h}: the drill's situation and goals in ${sizes.join(", ")} px type`);
    // Under the drill's band the proof and the arithmetic's rows stay on
    // the screen (the third row once ended below it).
    await page.waitForFunction(() => document.querySelectorAll(".arith tbody tr[data-row]").length === 3, null, { timeout: 30_000 });
    const d = await boxes(page);
    const off = [["proof", d.proof], ...d.rows.map((r, i) => [`row ${i + 1}`, r.box]), ...d.rows.map((r, i) => [`count ${i + 1}`, r.num])].filter(([, x]) => !inside(x, w, h) || x.right > d.arith.right + 0.5);
    if (off.length) throw new Error(`${w}x${h} drill: off the screen or its panel: ${off.map(([n, x]) => `${n} ${JSON.stringify(x)}`).join("; ")}`);
    t.ok(`${w}x${h}: a drill's situation and goals in ${Math.min(...sizes)} px type; the proof and the arithmetic's 3 rows on the screen`);
  }
  await page.setViewportSize({ width: 1280, height: 720 });

  // The mouse brings the header back; resting, it steps back again.
  await page.mouse.move(300, 300);
  await page.mouse.move(320, 310);
  if ((await page.locator("header.topbar").evaluate((h) => getComputedStyle(h).visibility)) !== "visible") throw new Error("a mouse move does not bring the controls back");
  await page.waitForFunction(() => document.body.classList.contains("pointer-idle"), null, { timeout: 6000 });
  t.ok("a mouse move brings the controls back; resting, they step back");

  // In the A/B view the header floats at the foot: the A/B transport at the
  // top stays in reach.
  await t.open("cmp=layered&present=1");
  await page.waitForSelector(".ab-side canvas");
  await page.mouse.move(300, 300);
  await page.mouse.move(320, 310);
  const [head, abBar] = await page.evaluate(() => [document.querySelector("header.topbar"), document.querySelector(".ab-transport")].map((e) => {
    const b = e.getBoundingClientRect();
    return { top: b.top, bottom: b.bottom };
  }));
  if (head.top < abBar.bottom && abBar.top < head.bottom) throw new Error(`the header ${JSON.stringify(head)} covers the A/B transport ${JSON.stringify(abBar)}`);
  t.ok("the A/B view in presenter mode: the header comes back at the foot, off the A/B transport");

  // Its conclusion is on screen at 1280 x 720, above the fleets, in the
  // room's type: the verdict and the question's counter.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.locator(".ab-transport button", { hasText: "Skip to the end" }).click();
  await page.waitForFunction(() => !/so far/.test(document.querySelector("[data-verdict]")?.textContent ?? "so far"), null, { timeout: 60_000 });
  const ab = await page.evaluate(() => {
    const r = (e) => e.getBoundingClientRect();
    const v = document.querySelector("[data-verdict]");
    const subject = document.querySelector(".ab-diff li.subject");
    const fleets = [...document.querySelectorAll(".ab-side .stage-canvas")].map((e) => r(e).top);
    return { vh: innerHeight, v: r(v), font: parseFloat(getComputedStyle(v).fontSize), text: v.textContent, subject: subject && r(subject), fleets };
  });
  if (!(ab.v.top >= 0 && ab.v.bottom <= ab.vh)) throw new Error(`the A/B verdict is at ${Math.round(ab.v.top)}-${Math.round(ab.v.bottom)} px of ${ab.vh}`);
  if (!(ab.subject && ab.subject.bottom <= ab.vh)) throw new Error(`the question's counter is at ${JSON.stringify(ab.subject)}`);
  if (!(ab.font >= 28)) throw new Error(`the A/B verdict is in ${ab.font} px type`);
  if (!ab.fleets.every((top) => top < ab.vh)) throw new Error(`the fleets start at ${ab.fleets} px of ${ab.vh}`);
  t.ok(`the A/B view at 1280x720 in presenter mode: "${ab.text.trim()}" at ${Math.round(ab.v.top)} px in ${ab.font} px type, the fleets below it`);

  // Upright on a phone: the side column goes under the fleet, nothing
  // overflows sideways, the fleet keeps most of the first screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await t.open("preset=burst&present=1");
  // The stage takes its height once presenter mode has laid the page out
  // (a frame or two after the open on a busy machine): wait for the layout
  // to settle before measuring it (the flake: 260 px read mid-layout).
  await page
    .waitForFunction(() => document.querySelector(".stage .stage-canvas canvas")?.getBoundingClientRect().height >= 300, null, {
      timeout: 10_000,
    })
    .catch(() => {});
  const phone = await page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - innerWidth,
    fleet: document.querySelector(".stage .stage-canvas canvas").getBoundingClientRect().height,
    proof: document.querySelector(".proof-panel").getBoundingClientRect().top,
  }));
  if (phone.overflow > 1) throw new Error(`390x844 presenter: ${phone.overflow}px of sideways overflow`);
  if (phone.fleet < 300) throw new Error(`390x844 presenter: the fleet is ${phone.fleet}px tall`);
  if (phone.proof < phone.fleet) throw new Error("390x844 presenter: the proof is not under the fleet");
  await t.shot("room-projector-phone-390x844.png");
  t.ok(`390x844 presenter: no sideways overflow, the fleet ${Math.round(phone.fleet)}px tall, the proof under it`);
  // At the run's end (the longest counts) the room's panels hold their
  // words: the arithmetic's 32 px rows once ran past the phone's right edge
  // inside a panel that hid it (so the page itself did not overflow).
  await page.keyboard.press("End");
  await t.expectMetric("recomputes", "1", "the card's run ends at one recompute");
  await page.waitForFunction(() => document.querySelectorAll(".arith tbody tr[data-row]").length === 3, null, { timeout: 30_000 });
  const spilt = await spills(page, ".arithmetic, .room-numbers, .proof-panel");
  if (spilt.length) throw new Error(`390x844 presenter at the run's end, past a panel's or the screen's edge: ${spilt.join("; ")}`);
  await page.locator(".arithmetic").scrollIntoViewIfNeeded();
  await t.shot("room-projector-phone-arithmetic-390x844.png");
  t.ok("390x844 presenter at the run's end: the arithmetic's rows, the counts and the proof inside their panels and the screen");
  // The tour's vote on a phone: the question and its options inside the screen.
  await page.goto(new URL("?present=1#tour/basics/1", page.url()).href);
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame && document.querySelector(".tour-options button")?.offsetParent);
  const voting = await spills(page, ".tour-question, .tour-options");
  if (voting.length) throw new Error(`390x844 presenter, the tour's vote past an edge: ${voting.join("; ")}`);
  t.ok("390x844 presenter: the tour's question and its options inside the screen");
  await page.setViewportSize({ width: 1280, height: 720 });

  // The theme toggle, remembered.
  await t.open("preset=burst&present=1");
  await page.mouse.move(330, 320);
  await page.locator(control("room-theme")).click();
  if (!(await page.evaluate(() => document.documentElement.classList.contains("room-dark")))) throw new Error("the theme toggle does not darken the room");
  await t.open("preset=burst&present=1");
  if (!(await page.evaluate(() => document.documentElement.classList.contains("room-dark")))) throw new Error("the room's theme is not remembered");
  await page.mouse.move(300, 300);
  await page.locator(control("room-theme")).click();
  if (!(await page.evaluate(() => document.documentElement.classList.contains("room-light")))) throw new Error("the toggle does not go back to light");
  t.ok("the room's theme toggles and is remembered across a reload");

  // The link carries presenter mode; it stays on across the page's links.
  await page.waitForFunction(() => location.search.includes("present=1"));
  await page.goto(new URL("?preset=naive", page.url()).href);
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame);
  if (!(await page.evaluate(() => document.body.classList.contains("presenter")))) throw new Error("presenter mode does not stay on across the page's own link");
  await page.waitForFunction(() => location.search.includes("present=1"));
  await page.keyboard.press("p");
  await page.waitForFunction(() => !location.search.includes("present=1"));
  t.ok("present=1 in the link; presenter mode stays on across the page's own links; p turns it off and out of the link");
  t.noProblems("at the end");
});
