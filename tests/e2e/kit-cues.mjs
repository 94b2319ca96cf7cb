// Issue 40, defect 9: the candidate's cues.
// 1. A curveball thrown from the kit into the candidate's window shows
//    there in a box across the top, in the danger colour and large type,
//    with what was thrown and when (the only notice was once a small grey
//    "Changed from… faults redis@3+5000" line). Its OK closes it.
// 2. A sentence about a run still in progress says so: paused mid-run
//    (the card's run with the curveball, a failing origin, the card itself)
//    the lesson's sentence reads "so far" or says what to watch (it once
//    read "1 recompute ran" at t = 11.9 ms of a run ending at 40), and at
//    the end it is the run's last word, as stampede-sim --url prints it.
// No console errors.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { pairKit } from "./lib/kit.mjs";
import { spec, root, shots, baseUrl, metric } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simulate = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));
const inProgress = (s) => /so far|watch|when this run ends/i.test(s);

await spec("kit-cues", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 720 });
  await t.open("seed=1&at=3");
  const { kit, code } = await pairKit(t);
  await kit.locator('[data-curveball="redis"]').click();
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Thrown"), null, { timeout: 30_000 });
  const cue = await page
    .waitForFunction(
      () => {
        const c = document.querySelector("[data-thrown-cue]");
        if (!c || c.hidden) return null;
        const b = c.getBoundingClientRect();
        const st = getComputedStyle(c);
        return { text: c.textContent, top: b.top, bottom: b.bottom, left: b.left, right: b.right, font: parseFloat(st.fontSize), border: st.borderTopColor, bg: st.backgroundColor };
      },
      null,
      { timeout: 10_000 },
    )
    .then((h) => h.jsonValue())
    .catch(async () => {
      throw new Error(`the candidate's window shows no cue of the throw; its only notice: ${JSON.stringify((await page.locator("body").innerText()).match(/Changed from[^\n]*/)?.[0] ?? "none")}`);
    });
  if (!/Redis goes down at \d+ ms/.test(cue.text)) throw new Error(`the cue reads ${JSON.stringify(cue.text)}`);
  if (cue.top < 0 || cue.bottom > 720 || cue.left < 0 || cue.right > 1280) throw new Error(`the cue ${JSON.stringify(cue)} is off the screen`);
  if (cue.font < 18) throw new Error(`the cue's type is ${cue.font} px`);
  await page.screenshot({ path: path.join(shots, "kit-cues-thrown-1280x720.png") });
  t.ok(`the throw shows in the candidate's window: "${cue.text.trim()}" in ${cue.font} px type`);
  await page.locator('[data-control="thrown-cue-close"]').click();
  if (await page.locator("[data-thrown-cue]").isVisible()) throw new Error("OK does not close the cue");
  t.ok("OK closes the cue");

  // 2. Mid-run sentences, then the end's.
  const thrown = new URL(page.url()).search.slice(1).replace(/(^|&)(at|play)=[^&]*/g, "");
  const cases = [
    [thrown, [12, 40, 120]],
    ["preset=failure&i=6&t=20&seed=1", [1500, 3000, 6000]],
    ["seed=1", [12, 60, 120]],
  ];
  for (const [q, moments] of cases) {
    for (const at of moments) {
      await t.open(`${q}&at=${at}`);
      await page.waitForFunction(([sel, at]) => Number(document.querySelector(sel)?.textContent) >= at, [metric("now_ms"), at], { timeout: 30_000 });
      await page.waitForTimeout(300);
      const s = (await page.locator("[data-lesson]").first().textContent()).trim();
      if (!inProgress(s)) throw new Error(`${q} paused at ${at} ms: mid-run the sentence reads ${JSON.stringify(s)}, as if the run were over`);
    }
    await page.keyboard.press("End");
    await t.untilEnd(120_000);
    const want = simulate(q).lesson.sentence;
    await page.waitForFunction((w) => document.querySelector("[data-lesson]")?.textContent.trim() === w, want, { timeout: 30_000 }).catch(async () => {
      throw new Error(`${q} at its end reads ${JSON.stringify(await page.locator("[data-lesson]").first().textContent())}, the CLI ${JSON.stringify(want)}`);
    });
    t.ok(`${q}: mid-run (${moments.join(", ")} ms) the sentence says the run goes on; at the end it is the CLI's`);
  }
  t.noProblems("the candidate's cues");
});
