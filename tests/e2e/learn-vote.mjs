// The room's vote (issue 17 §1): in presenter mode a prediction's options
// are large, lettered A to D; the presenter counts hands with the letter
// keys (Shift takes one back), and the reveal shows the room's spread beside
// the run's number, which is the CLI's; a question with no hands is skipped
// with Space. Screenshot at 1280x720.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { root, spec } from "./lib/harness.mjs";

const cli = process.env.STAMPEDE_SIM ?? path.join(root, "target", "debug", "stampede-sim");
const run = (q) => JSON.parse(execFileSync(cli, ["--url", q, "--json"], { encoding: "utf8" }));

await spec("learn-vote", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`${process.env.E2E_URL}#tour/basics/1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("p");
  await page.waitForFunction(() => document.body.classList.contains("presenter") && document.querySelector(".tour-letter"));
  const letters = await page.locator(".tour-letter").allTextContents();
  if (letters.join("") !== "ABCD") throw new Error(`letters: ${letters}`);
  const hint = (await page.locator(".tour-verdict").textContent()).trim();
  if (!hint.startsWith("Room vote: press A to D once per hand")) throw new Error(`hint: ${hint}`);
  t.ok(`presenter mode letters the options A to D: "${hint}"`);

  for (const [key, n] of [["a", 3], ["b", 5], ["c", 2]]) for (let i = 0; i < n; i++) await page.keyboard.press(key);
  await page.keyboard.press("Shift+B");
  const tally = await page.locator("[data-votes]").evaluateAll((es) => es.map((e) => e.dataset.votes));
  if (tally.join(",") !== "3,4,2,0") throw new Error(`tally ${tally}`);
  // The vote does not start the run: the question is still open at t = 0.
  if (!(await page.locator(".tour-number").textContent()).includes("?")) throw new Error("the number showed during the vote");
  t.ok("the letter keys count hands (A 3, B 5 then Shift+B to 4, C 2); the number stays hidden");
  // The room reads the options and their tallies from the back: at least
  // 28 px at 1280x720 and 40 px at 1920x1080.
  for (const [w, h, least] of [[1920, 1080, 40], [1280, 720, 28]]) {
    await page.setViewportSize({ width: w, height: h });
    const sizes = await page.evaluate(() =>
      [...document.querySelectorAll(".tour-options button, [data-votes]")].filter((e) => e.offsetParent).map((e) => [e.matches("[data-votes]") ? "tally" : "option", parseFloat(getComputedStyle(e).fontSize)]),
    );
    const tallies = sizes.filter(([k]) => k === "tally");
    if (tallies.length !== 4) throw new Error(`${w}x${h}: ${tallies.length} tallies on screen`);
    const small = sizes.filter(([, f]) => f < least);
    if (small.length) throw new Error(`${w}x${h}: under ${least} px: ${JSON.stringify(small)}`);
    t.ok(`${w}x${h}: the options and their four tallies in ${Math.min(...sizes.map(([, f]) => f))} px type (at least ${least})`);
  }
  await page.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "learn-vote-asking-1280x720.png") });

  // q shows the link's QR code over the vote: the room's hands stay.
  await page.keyboard.press("q");
  await page.waitForFunction(() => document.body.classList.contains("qr-open"), null, { timeout: 10_000 });
  await page.keyboard.press("Escape");
  const kept = await page.locator("[data-votes]").evaluateAll((es) => es.map((e) => e.dataset.votes));
  if (kept.join(",") !== "3,4,2,0") throw new Error(`after the QR code, the tally is ${kept}`);
  t.ok("q opens the QR code over the vote, and the room's hands are kept (A 3, B 4, C 2)");

  await page.keyboard.press(" ");
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  const want = run("preset=naive&i=3&t=4").recomputes;
  const verdict = (await page.locator(".tour-verdict").textContent()).trim();
  const expect = `The room: A 3, B 4, C 2, D 0 (9 hands). The run shows ${want} (B): 4 of 9 right.`;
  if (verdict !== expect) throw new Error(`verdict: ${verdict}, want ${expect}`);
  const right = await page.locator('[data-predict-option][data-right="1"]').textContent();
  if (!right.startsWith(`B${want}`)) throw new Error(`the right option: ${right}`);
  t.ok(`the reveal: "${verdict}" (the CLI's ${want})`);
  await page.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "learn-vote-revealed-1280x720.png") });

  // Skipped: no hands, no room line.
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "basics/2");
  await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
  await page.keyboard.press(" ");
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  const skipped = (await page.locator(".tour-verdict").textContent()).trim();
  if (skipped !== `The run shows ${run("preset=singleflight&i=3&t=4").recomputes}.`) throw new Error(`skipped: ${skipped}`);
  t.ok(`a vote skipped: "${skipped}"`);
  t.noProblems("the vote");
});
