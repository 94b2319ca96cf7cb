// "Write it in": the read path's panel shows the card or the same path in a
// language. Each language's text on the page is its file in examples/, byte
// for byte; the picker is a radio group a keyboard moves through; following
// the claim holder step by step lights, in the chosen language, the block
// that carries the card line the holder is on (its `card N` comment), or
// nothing where the code leaves that line out; the choice survives a
// reload; on a phone long lines scroll inside the code box, never the page.
// Screenshots at 1280x800 and 390x844.
import { readFileSync } from "node:fs";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";
// Independent of the page: the files it must show.
import { FILES } from "./lib/examples.mjs";

const radio = (name) => `[data-write-it] input[value="${name}"]`;

/// The listing's line the followed thread is on (from 0; -1: none), the
/// lit lines of the code box (from 0), and the line over the code.
const state = (page) =>
  page.evaluate(() => ({
    here: [...document.querySelectorAll(".listing > li")].findIndex((l) => l.classList.contains("here")),
    lit: [...document.querySelectorAll("[data-source] > .ln")].flatMap((l, i) => (l.classList.contains("here") ? [i] : [])),
    said: document.querySelector("[data-source-step]")?.textContent.trim() ?? "",
  }));

/// Checks the lit lines of `file` (its `text`) against the card line the
/// followed thread is on; returns what was seen, or null with nobody on a line.
async function check(page, name, file, text) {
  const s = await state(page);
  if (s.here < 0) return null;
  const n = s.here + 1;
  const at = markerLine(text, n);
  if (!s.said.startsWith(`Card line ${n},`)) throw new Error(`${name}: on card line ${n} the line over the code says ${JSON.stringify(s.said)}`);
  if (at < 0) {
    if (s.lit.length) throw new Error(`${name}: card line ${n} is not in ${file}, yet lines ${s.lit} are lit`);
    if (!s.said.includes("not in this code")) throw new Error(`${name}: card line ${n}: ${JSON.stringify(s.said)}`);
    return `${n}: -`;
  }
  const block = s.lit.every((l, k) => l === s.lit[0] + k);
  if (s.lit[0] !== at || !block) throw new Error(`${name}: card line ${n} is marked at line ${at + 1} of ${file}, lit: ${s.lit.map((l) => l + 1)}`);
  // The block is in view inside the code box.
  const inView = await page.evaluate((l) => {
    const pre = document.querySelector("pre.source");
    const line = document.querySelectorAll("[data-source] > .ln")[l];
    const a = pre.getBoundingClientRect();
    const b = line.getBoundingClientRect();
    return b.top >= a.top - 1 && b.bottom <= a.bottom + 1;
  }, at);
  if (!inView) throw new Error(`${name}: card line ${n}'s lines are lit out of the box's view`);
  return `${n}: ${s.lit[0] + 1}-${s.lit.at(-1) + 1}`;
}

/// The line (from 0) of `text` that carries the marker of card line `n`
/// (from 1), or -1.
const markerLine = (text, n) => text.split("\n").findIndex((l) => new RegExp(`(//|#) card ${n}(:|$)`).test(l));

await spec("write-it", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("preset=burst&speed=0.03");
  const names = await page.locator("[data-write-it] input").evaluateAll((is) => is.map((i) => i.value));
  if (names.join() !== ["card", ...Object.keys(FILES)].join()) throw new Error(`the picker offers ${names}`);
  if (!(await page.locator(radio("card")).isChecked())) throw new Error("a first visit does not show the card");
  t.ok(`the picker: ${names.join(", ")}; the card first`);

  // The keyboard: the radio group moves with the arrow keys.
  await page.locator(radio("card")).focus();
  await page.keyboard.press("ArrowRight");
  await page.waitForSelector('[data-source="go"]', { timeout: 5000 });
  if (!(await page.locator(radio("go")).isChecked())) throw new Error("ArrowRight from the card did not pick Go");
  if (!(await page.locator(".listing").isHidden())) throw new Error("the card's listing stays shown under Go");
  t.ok("ArrowRight from the card picks Go, and the card's listing gives way");

  // Each language's text is its file, byte for byte.
  for (const [name, file] of Object.entries(FILES)) {
    await page.locator(radio(name)).check();
    await page.waitForSelector(`[data-source="${name}"]`, { timeout: 5000 });
    const shown = await page.locator(`[data-source="${name}"]`).textContent();
    const want = readFileSync(path.join(root, file), "utf8");
    if (shown !== want) {
      const at = [...want].findIndex((c, i) => shown[i] !== c);
      throw new Error(`${name}: the page's text differs from ${file} at character ${at}: ${JSON.stringify(shown.slice(at, at + 40))}`);
    }
    const says = (await page.locator(".source-file code").textContent()).trim();
    if (says !== file) throw new Error(`${name}: the page names ${says}, not ${file}`);
    t.ok(`${name}: the page shows ${file}, ${Buffer.byteLength(want)} bytes, byte for byte`);
  }

  // Following the claim holder marker by marker: the lit block in each
  // language starts at the card line's own marker, one block, or is empty
  // where the code has no such line.
  await page.locator(control("follow")).selectOption("holder");
  for (const [name, file] of Object.entries(FILES)) {
    const text = readFileSync(path.join(root, file), "utf8");
    await page.locator(radio(name)).check();
    await page.waitForSelector(`[data-source="${name}"]`, { timeout: 5000 });
    await page.locator(control("restart")).click();
    await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === 0, null, { timeout: 10_000 });
    const seen = [];
    for (let i = 0; i < 10 && (await t.nextEvent()); i++) {
      const s = await check(page, name, file, text);
      if (s) seen.push(s);
    }
    const steps = new Set(seen.map((s) => s.split(":")[0]));
    if (steps.size < 3) throw new Error(`${name}: the holder was seen on too few card lines: ${seen.join(", ")}`);
    t.ok(`${name}: the holder's card lines and the lines lit in ${file}: ${seen.join(", ")}`);
    if (name === "go") await page.locator("section.code").screenshot({ path: new URL("./screenshots/write-it-1280.png", import.meta.url).pathname });
  }

  // The faded walk-through pauses at each of the holder's decisions: the
  // chosen language lights the decision's card line while it asks.
  {
    const [name, file] = ["python", FILES.python];
    const text = readFileSync(path.join(root, file), "utf8");
    await page.locator(radio(name)).check();
    await page.locator("[data-walk-level]").selectOption("faded");
    await page.locator(control("restart")).click();
    await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === 0, null, { timeout: 10_000 });
    await page.locator(control("play")).click();
    const seen = [];
    for (let i = 0; i < 8; i++) {
      try {
        await page.waitForFunction(() => document.querySelector("[data-walk-question]")?.hasAttribute("data-asking"), null, { timeout: 30_000 });
      } catch {
        break;
      }
      await page.waitForTimeout(300);
      const s = await check(page, name, file, text);
      seen.push(`${(await page.locator("[data-walk-question]").textContent()).trim()} → ${s ?? "no line"}`);
      await page.locator("[data-walk-show]").click();
      await page.waitForFunction(() => !document.querySelector("[data-walk-question]")?.hasAttribute("data-asking"), null, { timeout: 10_000 }).catch(() => {});
    }
    if (seen.length < 2) throw new Error(`the faded walk-through asked too little: ${seen.join(" | ")}`);
    t.ok(`the faded walk-through in ${name}: ${seen.join(" | ")}`);
    await page.locator("[data-walk-level]").selectOption("narrated");
  }

  // The choice survives a reload.
  await page.locator(radio("python")).check();
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector('[data-source="python"]', { timeout: 30_000 });
  if (!(await page.locator(radio("python")).isChecked())) throw new Error("after a reload Python is not the picked language");
  t.ok("Python is still picked after a reload");

  // A phone: the page never scrolls sideways; the code box does.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator(radio("go")).check();
  await page.waitForSelector('[data-source="go"]', { timeout: 5000 });
  await page.locator("pre.source").scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  const widths = await page.evaluate(() => {
    const pre = document.querySelector("pre.source");
    return { page: document.documentElement.scrollWidth, view: window.innerWidth, box: pre.scrollWidth, boxView: pre.clientWidth };
  });
  if (widths.page > widths.view) throw new Error(`at 390 px the page scrolls sideways: ${JSON.stringify(widths)}`);
  if (widths.box <= widths.boxView) throw new Error(`at 390 px the code box does not scroll its long lines: ${JSON.stringify(widths)}`);
  await page.locator("section.code").screenshot({ path: new URL("./screenshots/write-it-390.png", import.meta.url).pathname });
  t.ok(`at 390 px the page is ${widths.page} px wide; the code box scrolls ${widths.box} px of lines in ${widths.boxView} px`);
  t.noProblems("write-it");
});
