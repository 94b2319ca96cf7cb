// Interview mode: follow one thread through the read path. Picking "the
// claim holder" finds the thread that holds the claim and marks the line it
// is on as the run moves; clicking a thread in the fleet follows that one.
import { control, spec } from "./lib/harness.mjs";

await spec("interview", async (t) => {
  const { page } = t;
  await t.open("preset=burst&speed=0.03");
  await page.locator(control("follow")).selectOption("holder");
  await page.waitForFunction(() => document.querySelector("[data-followed]")?.textContent.trim().length > 0, null, {
    timeout: 30_000,
  });
  const lines = new Set();
  const captions = new Set();
  for (let i = 0; i < 60 && captions.size < 2; i++) {
    await page.waitForTimeout(200);
    const here = await page.$$eval(".listing > li", (ls) => ls.findIndex((l) => l.classList.contains("here")));
    if (here >= 0) lines.add(here);
    captions.add((await page.locator("[data-followed]").textContent()).trim());
  }
  await page.locator("section.code").screenshot({ path: new URL("./screenshots/interview-code.png", import.meta.url).pathname });
  if (lines.size < 1 || captions.size < 2) {
    throw new Error(`the followed holder: lines ${[...lines]}, captions ${[...captions].join(" | ")}`);
  }
  t.ok(`the claim holder is followed (${[...captions].join(" → ")}), its line marked (${[...lines].map((l) => l + 1).join(", ")})`);
  // The marked line is the line the holder is on, marker by marker: the
  // recompute's line while it recomputes, SET's as it writes, the release's
  // last (the core's read_path::Place, not a guess from its colour).
  const here = () => page.$$eval(".listing > li", (ls) => ls.findIndex((l) => l.classList.contains("here")));
  const code = (i) => page.$$eval(".listing > li code", (cs, i) => cs[i]?.textContent ?? "", i);
  await page.locator(control("restart")).click();
  const seen = [];
  for (let i = 0; i < 8; i++) {
    const before = await t.text("now_ms");
    await page.keyboard.press("n");
    try {
      await page.waitForFunction((b) => document.querySelector('[data-metric="now_ms"]').textContent !== b, before, { timeout: 5000 });
    } catch {
      break;
    }
    await page.waitForTimeout(300);
    const l = await here();
    seen.push([await t.text("now_ms"), l, l >= 0 ? await code(l) : ""]);
  }
  const codes = seen.map((s) => s[2]);
  for (const want of [/recompute/, /^SET key/]) {
    if (!codes.some((c) => want.test(c))) throw new Error(`the holder's marked lines never reach ${want}: ${JSON.stringify(seen)}`);
  }
  await page.keyboard.press("End");
  await t.expectMetric("recomputes", "1", "the run ends as always");
  await page.waitForTimeout(400);
  const last = await code(await here());
  if (!/^release/.test(last)) throw new Error(`at the end the holder's line is ${JSON.stringify(last)}, not the release`);
  t.ok(`the holder's line, marker by marker: ${seen.map((s) => `${s[0]} ms: ${s[2] || "-"}`).join("; ")}; at the end: ${last}`);
  await t.shot("interview.png");

  // A click on a thread follows that thread.
  await page.locator(control("follow")).selectOption("nobody");
  await page.waitForFunction(() => document.querySelector("[data-followed]")?.textContent.trim() === "");
  const canvas = page.locator(".stage .stage-canvas canvas").first();
  const box = await canvas.boundingBox();
  let said = "";
  for (const [fx, fy] of [[0.06, 0.08], [0.1, 0.12], [0.3, 0.3], [0.5, 0.5]]) {
    await canvas.click({ position: { x: box.width * fx, y: box.height * fy } });
    await page.waitForTimeout(150);
    said = (await page.locator("[data-followed]").textContent()).trim();
    if (said) break;
  }
  if (!/^Thread \d+ of office \d+/.test(said)) throw new Error(`clicking the fleet follows nobody: "${said}"`);
  t.ok(`a click on the fleet follows that thread: "${said}"`);
  // A new scenario forgets it.
  await page.selectOption(control("preset"), "naive");
  await page.waitForFunction(() => document.querySelector("[data-followed]")?.textContent.trim() === "");
  t.ok("a new scenario forgets the followed thread");

  // A holder that dies as it wins: the caption says so, with the run's times.
  await t.open("preset=holder-crash&at=7000");
  await page.locator(control("follow")).selectOption("holder");
  await page.waitForFunction(() => /crashed at/.test(document.querySelector("[data-followed]")?.textContent ?? ""), null, { timeout: 30_000 });
  const crash = (await page.locator("[data-followed]").textContent()).trim();
  if (!/^Thread \d+ of office \d+ won the claim and crashed at [\d.]+ ms; its claim stays in Redis until its TTL runs out at [\d.]+ ms/.test(crash)) {
    throw new Error(`the crash's caption: ${crash}`);
  }
  t.ok(`the holder's crash is narrated through the stall: "${crash}"`);

  // Presenter mode: the listing beside the fleet, in large type.
  await page.setViewportSize({ width: 1280, height: 720 });
  await t.open("preset=burst&speed=0.03&present=1");
  await page.locator(control("follow")).selectOption("holder").catch(() => {});
  await page.evaluate(() => {
    const s = document.querySelector('[data-control="follow"]');
    s.value = "holder";
    s.dispatchEvent(new Event("change"));
  });
  await page.waitForFunction(() => document.querySelector(".listing > li.here"), null, { timeout: 30_000 });
  const lay = await page.evaluate(() => {
    const l = document.querySelector(".listing").getBoundingClientRect();
    const c = document.querySelector(".stage canvas").getBoundingClientRect();
    return { l: [l.left, l.top, l.right, l.bottom], c: [c.left, c.right], font: parseFloat(getComputedStyle(document.querySelector(".listing li")).fontSize) };
  });
  if (!(lay.l[0] >= lay.c[1] && lay.l[3] <= 721 && lay.l[1] >= 0)) throw new Error(`the listing is not beside the fleet on the screen: ${JSON.stringify(lay)}`);
  if (lay.font < 18) throw new Error(`the listing's type is ${lay.font}px in presenter mode`);
  await t.shot("interview-presenter-1280x720.png");
  t.ok(`presenter mode: the read path beside the fleet at ${lay.font}px`);
  t.noProblems("at the end");
});
