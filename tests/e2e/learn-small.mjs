// Small first (issue 29 §1): the tour's basics open on 3 offices of 4
// threads, each thread drawn large (its glyph at least 24 px) with its
// state in words, at 1280x800 and 390x844; each of the three small steps
// asks its prediction before the run shows its number, and reveals the
// number stampede-sim gives for the step's link; the fourth step is the
// same rule at 40 x 200, drawn densely. Following the claim holder of a
// small fleet stops before each of its decisions, as the walk-through
// does at 40 x 200 (stampede-sim --walk's questions). Screenshots at both sizes.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const run = (q) => JSON.parse(execFileSync(cli, ["--url", q, "--json"], { encoding: "utf8" }));

const SMALL = [
  ["basics/1", "preset=naive&i=3&t=4"],
  ["basics/2", "preset=singleflight&i=3&t=4"],
  ["basics/3", "preset=burst&i=3&t=4"],
];

const onStep = (page, step) =>
  page.waitForFunction((s) => document.querySelector("[data-tour-step]")?.dataset.tourStep === s, step, { timeout: 30_000 });
const drawn = (page) =>
  page.evaluate(() => ({ glyph: Number(document.documentElement.dataset.threadGlyph), words: document.documentElement.dataset.threadWords }));

await spec("learn-small", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/basics/1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });

  for (const [i, [step, query]] of SMALL.entries()) {
    await onStep(page, step);
    await page.waitForFunction(() => document.documentElement.dataset.threadWords, null, { timeout: 30_000 });
    const d = await drawn(page);
    if (!(d.glyph >= 24) || d.words !== "1") throw new Error(`${step} at 1280x800: threads drawn ${d.glyph} px, words ${d.words}`);
    // Asked first: the options show and the number is hidden.
    await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
    if (await page.locator(".tour-number[data-revealed]").count()) throw new Error(`${step}: the number shows before the bet`);
    const want = String(run(query).recomputes);
    const options = (await page.locator("[data-predict-option]").allTextContents()).map((o) => o.trim());
    if (!options.includes(want)) throw new Error(`${step}: no option ${want} among ${options}`);
    if (i === 0) await t.shot("learn-small-asking-1280x800.png");
    // Pick the run's number, then the reveal says it and so does the step.
    await page.locator(`[data-predict-option="${options.indexOf(want)}"]`).click();
    await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
    const shown = (await page.locator(".tour-number").textContent()).trim();
    const verdict = (await page.locator(".tour-verdict").textContent()).trim();
    if (shown !== want || !verdict.startsWith(`Right: the run shows ${want}.`)) {
      throw new Error(`${step}: revealed ${shown}, "${verdict}"; stampede-sim says ${want} for ${query}`);
    }
    await t.untilEnd(60_000);
    if (i === 2) await t.shot("learn-small-claim-1280x800.png");
    t.ok(`${step} (${query}): threads at ${d.glyph} px with words; asked first, revealed ${want} as stampede-sim says`);
    await page.locator(control("tour-next")).click();
  }
  await onStep(page, "basics/4");
  await page.waitForFunction(() => document.documentElement.dataset.threadWords === "0", null, { timeout: 30_000 });
  const question = (await page.locator(".tour-question").textContent()).trim();
  if (!/40 offices of 200 clerks/.test(question)) throw new Error(`basics/4 asks ${question}`);
  t.ok(`basics/4 scales the same question up: "${question}", the fleet drawn densely`);

  // Following one thread at the small size: the walk-through stops before
  // each of its decisions, as it does at 40 x 200, with stampede-sim's
  // questions for the same link.
  const query = "preset=burst&i=3&t=4&seed=1";
  const walk = JSON.parse(execFileSync(cli, ["--walk", "--url", query, "--follow", "holder", "--level", "faded", "--json"], { encoding: "utf8" }));
  if (walk.asked.length < 2) throw new Error(`the CLI's walk of 3 x 4 asks too little: ${JSON.stringify(walk.asked)}`);
  await t.open(query);
  await page.locator("[data-walk-level]").selectOption("faded");
  await page.locator(control("follow")).selectOption("holder");
  await page.locator(control("restart")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === 0, null, { timeout: 10_000 });
  await page.locator(control("play")).click();
  const path_ = [];
  for (const [i, a] of walk.asked.entries()) {
    await page.waitForFunction(
      (q) => {
        const p = document.querySelector("[data-walk-question]");
        return p?.hasAttribute("data-asking") && p.textContent.trim() === q;
      },
      a.question,
      { timeout: 30_000 },
    );
    path_.push((await page.locator("[data-followed]").textContent()).trim());
    if (i === 0) await t.shot("learn-small-follow-1280x800.png");
    await page.locator(`[data-walk-option="${a.right}"]`).click();
    await page.waitForFunction(() => document.querySelector("[data-walk-feedback]")?.dataset.correct === "true", null, { timeout: 10_000 });
  }
  t.ok(`following the claim holder of 3 x 4 (thread ${walk.thread}): ${walk.asked.length} stops, as stampede-sim --walk asks (${walk.asked.map((a) => a.kind).join(", ")}); captions ${path_.map((c) => `"${c.slice(0, 48)}"`).join(" → ")}`);

  // A phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/basics/1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await onStep(page, "basics/1");
  await page.waitForFunction(() => document.documentElement.dataset.threadWords, null, { timeout: 30_000 });
  const phone = await drawn(page);
  if (!(phone.glyph >= 24) || phone.words !== "1") throw new Error(`at 390x844: threads drawn ${phone.glyph} px, words ${phone.words}`);
  await page.locator(control("predict-show")).click();
  await t.untilEnd(60_000);
  await page.locator(".stage canvas").first().scrollIntoViewIfNeeded();
  await t.shot("learn-small-390x844.png");
  t.ok(`at 390x844 the small fleet's threads are ${phone.glyph} px with words`);
  t.noProblems("the small fleet");
  // No other place says a step's number before the tour reveals it: on the
  // hung-origin step every request is "pinned" from the first milliseconds,
  // and the proof used to show 8000 while the step still asked.
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/deeper/2`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await onStep(page, "deeper/2");
  await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
  await page.locator("[data-predict-option]").first().click();
  const hiddenWhile = async (what) => {
    const leaked = await page.evaluate(() =>
      [...document.querySelectorAll('.lab [data-metric="pinned"]:not(.tour-number)')]
        .filter((e) => e.checkVisibility({ visibilityProperty: true }))
        .map((e) => e.textContent.trim()),
    );
    if (leaked.length) throw new Error(`deeper/2 ${what}: the number shows before the reveal: ${leaked.join(", ")}`);
  };
  await hiddenWhile("asked");
  await page.waitForTimeout(1000);
  if (!(await page.locator(".tour-number[data-revealed]").count())) await hiddenWhile("mid-run");
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  const proofShown = await page.locator('.lab [data-metric="pinned"]:not(.tour-number)').first().isVisible();
  if (!proofShown) throw new Error("deeper/2: the proof stays hidden after the reveal");
  t.ok("deeper/2: the proof and the counters wait for the tour's reveal, then show the number");
});
