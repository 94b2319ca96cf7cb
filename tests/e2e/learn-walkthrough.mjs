// The interview mode's faded walk-through: following the claim holder, the
// run pauses just before each decision the card teaches (the clock never
// moves back), a wrong pick shows its feedback marked wrong and the run
// stays paused, the right pick resumes it; the questions, their right
// options and every feedback sentence are stampede-sim --walk's for the same
// link; the level is remembered over a reload. The tour's "Your practice"
// brings the practice panel into view and focuses it. Screenshots at
// 1280x800 and 390x844.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const QUERY = "preset=burst&speed=0.2";
const walkOf = (query, follow, level) =>
  JSON.parse(execFileSync(cli, ["--walk", "--url", query, "--follow", follow, "--level", level, "--json"], { encoding: "utf8" }));

const asking = (page, question) =>
  page.waitForFunction(
    (q) => {
      const p = document.querySelector("[data-walk-question]");
      return p?.hasAttribute("data-asking") && p.textContent.trim() === q;
    },
    question,
    { timeout: 30_000 },
  );

const feedback = async (page, correct) => {
  await page.waitForFunction((c) => document.querySelector("[data-walk-feedback]")?.dataset.correct === c, String(correct), {
    timeout: 10_000,
  });
  return (await page.locator("[data-walk-feedback]").textContent()).trim();
};

const nowMs = async (t) => Number(await t.text("now_ms"));
const playing = async (page) => (await page.locator(control("play")).getAttribute("aria-pressed")) === "true";

/// Starts the run over from t = 0 with the walk-through on and the holder
/// followed, and plays it.
async function fromTheStart(t) {
  const { page } = t;
  await page.locator(control("follow")).selectOption("holder");
  await page.locator(control("restart")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === 0, null, { timeout: 10_000 });
  await page.locator(control("play")).click();
}

await spec("learn-walkthrough", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  const walk = walkOf(QUERY, "holder", "faded");
  if (walk.asked.length < 2) throw new Error(`the CLI's walk asks too little: ${JSON.stringify(walk)}`);
  t.ok(`stampede-sim --walk: ${walk.asked.map((a) => `${a.kind} → ${a.right}`).join(", ")} (thread ${walk.thread})`);

  await t.open(QUERY);
  await page.locator("[data-walk-level]").selectOption("faded");
  await fromTheStart(t);
  for (const [i, a] of walk.asked.entries()) {
    await asking(page, a.question);
    const at = await nowMs(t);
    if (at > a.t / 1000) throw new Error(`${a.kind}: asked at ${at} ms, after its event at ${a.t / 1000} ms`);
    await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false", null, {
      timeout: 5000,
    });
    const keys = await page.locator("[data-walk-option]").evaluateAll((bs) => bs.map((b) => b.dataset.walkOption));
    const want = a.options.map((o) => o.key);
    if (keys.join() !== want.join()) throw new Error(`${a.kind}: options ${keys}, the CLI's ${want}`);
    if (i === 0) {
      // Asked off screen, the question is brought into view.
      const seen = await page.evaluate(() => {
        const r = document.querySelector("[data-walk]").getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight;
      });
      if (!seen) throw new Error("the question is asked off screen");
      // At 1280 x 800 the fleet it is about stays in view with it.
      const fleet = await page.evaluate(() => {
        const r = document.querySelector(".stage canvas").getBoundingClientRect();
        return r.top >= -r.height / 2 && r.top < window.innerHeight / 2;
      });
      if (!fleet) throw new Error("asking the question scrolled the fleet out of view");
    }
    // A wrong pick: feedback at once, marked wrong, the CLI's sentence; the
    // run stays where it is.
    const wrong = a.options.find((o) => !o.correct);
    await page.locator(`[data-walk-option="${wrong.key}"]`).click();
    const said = await feedback(page, false);
    if (said !== wrong.feedback) throw new Error(`${a.kind}/${wrong.key}: the page says ${JSON.stringify(said)}, the CLI ${JSON.stringify(wrong.feedback)}`);
    if (i === 0) {
      await t.shot("learn-walkthrough-1280.png");
      // The question, its options and the feedback pass axe (as tests/e2e/a11y.mjs runs it).
      await page.evaluate(readFileSync(path.join(root, ".tools", "node_modules", "axe-core", "axe.min.js"), "utf8"));
      const bad = await page.evaluate(async () => {
        // eslint-disable-next-line no-undef
        const r = await axe.run(document.querySelector("section.code"), {
          resultTypes: ["violations"],
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"] },
        });
        return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      });
      if (bad.length) throw new Error(`axe on the walk-through: ${bad.join("; ")}`);
      t.ok("the walk-through's question, options and feedback: no serious or critical axe violation");
    }
    await page.waitForTimeout(300);
    if ((await nowMs(t)) !== at || (await playing(page))) throw new Error(`${a.kind}: a wrong pick moved the run`);
    // The right pick, the CLI's: marked right, and the run goes on.
    const right = a.options.find((o) => o.correct);
    if (right.key !== a.right) throw new Error(`the CLI's right option is inconsistent: ${JSON.stringify(a)}`);
    await page.locator(`[data-walk-option="${right.key}"]`).click();
    const yes = await feedback(page, true);
    if (yes !== right.feedback) throw new Error(`${a.kind}/${right.key}: the page says ${JSON.stringify(yes)}, the CLI ${JSON.stringify(right.feedback)}`);
    const next = walk.asked[i + 1];
    if (!next || next.t > a.t) {
      await page.waitForFunction((b) => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > b, at, { timeout: 10_000 });
    }
    t.ok(`${a.kind} at ${a.t / 1000} ms: paused at ${at} ms; "${wrong.key}" marked wrong, "${right.key}" right and the run resumed`);
  }
  const cost = await page.evaluate(() => document.documentElement.dataset.walkMs);
  t.ok(`the walk-through was worked out in ${cost} ms (the page's run of the same link, looked ahead)`);
  await page.waitForFunction(
    (n) => document.querySelector("[data-walk-question]")?.textContent.trim() === `All ${n} questions answered or shown.`,
    walk.asked.length,
    { timeout: 30_000 },
  );
  await t.untilEnd();
  await t.expectMetric("recomputes", "1", "the walked run ends as the run always does");

  // "Show me" answers and resumes too.
  await fromTheStart(t);
  await asking(page, walk.asked[0].question);
  await page.locator("[data-walk-show]").click();
  // Shown, not the learner's answer: "The answer: …", not "Right: …".
  const shown = `The answer: ${walk.asked[0].options.find((o) => o.correct).feedback.replace(/^Right: /, "")}`;
  if ((await feedback(page, true)) !== shown) throw new Error(`show me says ${JSON.stringify(await page.locator("[data-walk-feedback]").textContent())}, not ${JSON.stringify(shown)}`);
  t.ok("show me gives the right option's reason as the answer, not as the learner's, and moves on");

  // Play with a question open goes on the same way: the answer, shown.
  await fromTheStart(t);
  await asking(page, walk.asked[0].question);
  await page.locator('[data-control="play"]').click();
  await page.waitForFunction(() => !document.querySelector("[data-walk-question]")?.hasAttribute("data-asking") || document.querySelector("[data-walk-feedback]")?.hasAttribute("data-last"), null, { timeout: 30_000 });
  if ((await feedback(page, true)) !== shown) throw new Error("Play with a question open: not the answer shown");
  await page.waitForFunction((q) => document.querySelector("[data-walk-question]")?.textContent.trim() !== q, walk.asked[0].question, { timeout: 30_000 });
  t.ok("Play with a question open shows its answer and plays on");

  // Jumping past a question (n, the next event) does not skip it unsaid:
  // its answer is shown, as jumped past (the core's Asked::jumped).
  await fromTheStart(t);
  await asking(page, walk.asked[0].question);
  await page.keyboard.press("n");
  await page.waitForFunction(() => document.querySelector("[data-walk-feedback]")?.textContent.startsWith("Jumped past"), null, { timeout: 10_000 });
  // The last question the clock passed is the one said (n may pass more).
  const after = await nowMs(t);
  const passed = walk.asked.filter((a) => a.t / 1000 <= after);
  const last = passed[passed.length - 1];
  const jumped = `Jumped past “${last.question}” The answer: ${last.options.find((o) => o.correct).feedback.replace(/^Right: /, "")}`;
  const said = (await page.locator("[data-walk-feedback]").textContent()).trim();
  if (said !== jumped) throw new Error(`n past a question says ${JSON.stringify(said)}, not ${JSON.stringify(jumped)}`);
  t.ok(`n past an open question (to ${after} ms, past ${passed.length}) shows the last one's answer, said to be jumped past`);

  // The level is remembered over a reload.
  await page.reload({ waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  const kept = await page.locator("[data-walk-level]").inputValue();
  if (kept !== "faded") throw new Error(`after a reload the level is ${kept}`);
  t.ok("the level is remembered over a reload");

  // On a phone: the question and its options fit the width.
  await page.setViewportSize({ width: 390, height: 844 });
  await fromTheStart(t);
  await asking(page, walk.asked[0].question);
  await page.locator("[data-walk]").scrollIntoViewIfNeeded();
  const overflow = await page.evaluate(() => {
    const w = document.querySelector("[data-walk]").getBoundingClientRect();
    const bs = [...document.querySelectorAll("[data-walk-option]")].map((b) => b.getBoundingClientRect());
    return w.right > window.innerWidth || bs.some((b) => b.right > w.right + 1 || b.width < 44);
  });
  if (overflow) throw new Error("at 390 px the walk-through's options overflow");
  await page.locator(`[data-walk-option="${walk.asked[0].options.find((o) => !o.correct).key}"]`).click();
  await feedback(page, false);
  await t.shot("learn-walkthrough-390.png");
  t.ok("at 390x844 the question and options fit");

  // On your own: every step is asked, "which line next?" among them, the
  // CLI's questions in the CLI's order.
  const own = walkOf(QUERY, "holder", "own");
  if (own.asked.length <= walk.asked.length) throw new Error(`on your own asks ${own.asked.length}, faded ${walk.asked.length}`);
  await page.locator("[data-walk-level]").selectOption("own");
  await fromTheStart(t);
  for (const a of own.asked.slice(0, 4)) {
    await asking(page, a.question);
    const keys = await page.locator("[data-walk-option]").evaluateAll((bs) => bs.map((b) => b.dataset.walkOption));
    if (keys.join() !== a.options.map((o) => o.key).join()) throw new Error(`own ${a.kind}: options ${keys}, the CLI's ${a.options.map((o) => o.key)}`);
    await page.locator(`[data-walk-option="${a.right}"]`).click();
    const want = a.options.find((o) => o.correct).feedback;
    await page.waitForFunction((w) => document.querySelector("[data-walk-feedback]")?.textContent.trim() === w, want, { timeout: 10_000 });
    await feedback(page, true);
  }
  t.ok(`on your own: ${own.asked.length} questions (faded: ${walk.asked.length}); the first four as the CLI asks them, right picks marked right`);

  // Narrated asks nothing: the run plays through.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator("[data-walk-level]").selectOption("narrated");
  await fromTheStart(t);
  await t.untilEnd();
  if (await page.locator("[data-walk]").isVisible()) throw new Error("narrated shows the walk-through's questions");
  t.ok("narrated: nothing asked, the run plays to its end");

  // The tour's way to "Your practice".
  await page.goto(`${process.env.E2E_URL}?seed=1#tour/basics/1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.locator("#practice").waitFor({ state: "attached", timeout: 30_000 });
  const link = page.locator("[data-practice-link]");
  await page.locator(".tour-more").screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "learn-walkthrough-tour.png") });
  await link.click();
  await page.waitForFunction(
    () => {
      const p = document.getElementById("practice");
      const r = p.getBoundingClientRect();
      return document.activeElement === p && r.top < window.innerHeight && r.bottom > 0;
    },
    null,
    { timeout: 10_000 },
  );
  await t.shot("learn-walkthrough-practice.png");
  t.ok("the tour's practice link scrolls the panel into view and focuses it");
  t.noProblems("the walk-through");
});
