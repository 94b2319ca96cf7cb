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
  await page.keyboard.press("End");
  await t.expectMetric("recomputes", "1", "the run ends as always");
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
  t.noProblems("at the end");
});
