// The interviewer's kit (?kit=1) in a second window of the same browser,
// beside two open windows of the page: it pairs with one of them through
// the short code that window shows (data-pair-code in both), and its
// curveballs and Show buttons reach that window only. A curveball reaches
// the paired window's running run without a restart (the clock does not go
// back), the fault's counter rises after it, and the candidate's link
// afterwards replays the same run (the same numbers as stampede-sim --url).
// Each message is acknowledged; when the candidate's window closes the kit
// says it is gone, and a message sent then did not arrive.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { spec, root, baseUrl, metric } from "./lib/harness.mjs";
import { askedOnScreen } from "./lib/kit.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simulate = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));
const status = (kit) => kit.locator("[data-kit-status]").textContent().then((s) => s.trim());

await spec("kit", async (t) => {
  const { page: other } = t;
  const link = "preset=jitter&c=inner&i=6&t=30&seed=2";
  // Two windows of the page: the interviewer's own preview, and the
  // candidate's (the one shared on screen).
  await t.open(link);
  const candidate = await other.context().newPage();
  for (const p of [candidate]) {
    p.on("console", (m) => m.type() === "error" && t.problems.push(`candidate console error: ${m.text()}`));
    p.on("pageerror", (e) => t.problems.push(`candidate exception: ${e.message}`));
  }
  await candidate.goto(`${baseUrl}?${link}`, { waitUntil: "load" });
  await candidate.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });

  const kit = await other.context().newPage();
  kit.on("console", (m) => m.type() === "error" && t.problems.push(`kit console error: ${m.text()}`));
  kit.on("pageerror", (e) => t.problems.push(`kit exception: ${e.message}`));
  await kit.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await kit.locator("[data-kit]").waitFor({ timeout: 30_000 });
  const card = kit.locator('[data-kit-question="0"]');
  for (const level of ["basics", "solid", "deeper"]) {
    const n = await card.locator(`[data-level="${level}"] li`).count();
    if (n < 3) throw new Error(`${level}: ${n} points`);
  }
  t.ok("the card's question: the three levels, each naming at least three points");
  const flags = await card.locator("[data-red-flag]").count();
  if (flags !== 5) throw new Error(`${flags} red flags`);
  const follow = await card.locator("[data-follow-up] strong").allTextContents();
  if (follow.length < 5 || follow.some((q) => !q.endsWith("?"))) throw new Error(`follow-ups: ${follow.join(" | ")}`);
  t.ok(`5 red flags and ${follow.length} follow-ups, worded as the page's questions`);

  // Every reference question is in the kit, with its own levels, red flags
  // and follow-ups, worded as the page words it; one is on screen at a time.
  const reference = await other.evaluate(() =>
    [...document.querySelectorAll("[data-question]")].map((d) => [d.dataset.question, d.querySelector("summary").textContent.trim()]),
  );
  for (const [n, asks] of reference) {
    await kit.locator(`.kit-pick[data-ask="${n}"]`).click();
    const q = kit.locator(`[data-kit-question="${n}"]`);
    await q.waitFor({ state: "visible", timeout: 5_000 });
    const shown = await kit.locator("[data-kit-question]:not([hidden])").count();
    if (shown !== 1) throw new Error(`question ${n}: ${shown} questions on screen`);
    const words = (await q.locator(".kit-question").textContent()).trim();
    if (words !== asks) throw new Error(`question ${n}: the kit asks ${JSON.stringify(words)}, the page ${JSON.stringify(asks)}`);
    for (const level of ["basics", "solid", "deeper"]) {
      if ((await q.locator(`[data-level="${level}"] li`).count()) < 2) throw new Error(`question ${n}: ${level} names under 2 points`);
    }
    if ((await q.locator("[data-red-flag]").count()) < 1) throw new Error(`question ${n}: no red flag`);
    if ((await q.locator("[data-follow-up]").count()) < 1) throw new Error(`question ${n}: no follow-up`);
  }
  t.ok(`all ${reference.length} reference questions: each on screen alone, worded as the page words it, with levels, red flags and follow-ups`);
  // The same questions in words, one click each (no hover needed).
  await kit.locator(".kit-all > summary").click();
  await kit.locator('[data-ask-words="7"]').click();
  await kit.locator('[data-kit-question="7"]').waitFor({ state: "visible", timeout: 5_000 });
  if ((await kit.locator('[data-ask-words="7"]').textContent()).includes(reference[6][1]) === false) throw new Error("the list's words are not question 7's");
  if (await kit.locator(".kit-all").evaluate((d) => d.open)) throw new Error("the list stays open over the question it put on screen");
  t.ok("the list of questions in words puts question 7 on screen and folds away");
  await kit.locator('.kit-pick[data-ask="0"]').click();
  if (await kit.locator(".reference-area").isVisible()) throw new Error("the kit's window shows the reference");

  // Both page windows show their code once the kit is open; they differ.
  const codeOf = async (p) => {
    await p.locator(".pair-badge[data-pair-code]:not([hidden])").waitFor({ timeout: 10_000 });
    return p.locator(".pair-badge").getAttribute("data-pair-code");
  };
  const [mine, theirs] = [await codeOf(other), await codeOf(candidate)];
  if (!/^[A-Z2-9]{4}$/.test(theirs) || mine === theirs) throw new Error(`codes ${mine} and ${theirs}`);
  await kit.locator(`[data-pair-with="${theirs}"]`).waitFor({ timeout: 10_000 });
  await kit.locator(`[data-pair-with="${mine}"]`).waitFor({ timeout: 10_000 });
  t.ok(`both windows show a pairing code (${mine}, ${theirs}) and the kit hears both`);
  // Throwing before pairing reaches nobody.
  await kit.locator('[data-curveball="redis"]').click();
  if (!/pair with the candidate's window first/.test(await status(kit))) throw new Error(`unpaired: ${await status(kit)}`);
  await kit.locator("[data-pair-input]").fill(theirs.toLowerCase());
  await kit.locator(".kit-pair-form button[type=submit]").click();
  await kit.locator(`.kit-paired [data-pair-code="${theirs}"]`).waitFor({ timeout: 10_000 });
  await kit.locator('[data-pair-alive="1"]').waitFor({ timeout: 10_000 });
  await candidate.waitForFunction(() => document.querySelector(".pair-badge")?.dataset.paired === "1", null, { timeout: 10_000 });
  if ((await other.locator(".pair-badge").getAttribute("data-paired")) !== "0") throw new Error("the other window says it is paired");
  t.ok(`the kit is paired with ${theirs} (typed in lower case), which says so; ${mine} is not`);
  await askedOnScreen(t, kit, candidate, { others: [other] });
  await kit.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "kit-paired.png") });
  await candidate.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "kit-candidate-badge.png") });

  // Let the candidate's run play a few seconds in, pause it, then throw.
  const number = async (p, name) => Number((await p.locator(metric(name)).first().textContent()).trim());
  await candidate.waitForFunction((sel) => Number(document.querySelector(sel)?.textContent) > 3000, metric("now_ms"), { timeout: 60_000 });
  await candidate.keyboard.press("Space");
  const before = await number(candidate, "now_ms");
  const quietErrors = await number(candidate, "redis_errors").catch(() => 0);
  const otherLink = new URL(other.url()).search;
  await kit.locator('[data-curveball="redis"]').click();
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Thrown: redis"), null, { timeout: 20_000 });
  await candidate.waitForFunction(() => /(^|&)f=redis/.test(location.search.slice(1)), null, { timeout: 10_000 });
  const after = await number(candidate, "now_ms");
  if (after < before) throw new Error(`the clock went back: ${before} -> ${after}`);
  t.ok(`the curveball lands in ${theirs} at ${before} ms without a restart (clock ${after} ms): ${await status(kit)}`);
  const thrown = new URL(candidate.url()).search.slice(1);
  await candidate.keyboard.press("End");
  await candidate.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false", null, { timeout: 120_000 });
  await candidate
    .waitForFunction(([sel, quiet]) => Number(document.querySelector(sel)?.textContent) > quiet, [metric("redis_errors"), quietErrors], { timeout: 120_000 })
    .catch(() => {});
  const errors = await number(candidate, "redis_errors");
  if (!(errors > quietErrors)) throw new Error(`redis_errors ${quietErrors} -> ${errors}`);
  const want = simulate(thrown);
  for (const m of ["redis_errors", "recomputes", "claim_attempts"]) {
    await candidate.waitForFunction(([sel, v]) => document.querySelector(sel)?.textContent.trim() === v, [metric(m), String(want[m])], { timeout: 30_000 }).catch(async () => {
      throw new Error(`${m}: the link ${thrown} gives ${want[m]}, the page ${await number(candidate, m)}`);
    });
  }
  t.ok(`redis_errors ${quietErrors} -> ${errors}; the link ${thrown} replays the run`);

  // Show reaches the paired window only.
  const show = kit.locator("[data-show]").first();
  const shown = await show.getAttribute("data-show");
  await show.click();
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Arrived"), null, { timeout: 20_000 });
  const opened = Object.fromEntries(new URLSearchParams(shown));
  await candidate.waitForFunction(
    (want) => Object.entries(want).every(([k, v]) => new URLSearchParams(location.search).get(k) === v),
    opened,
    { timeout: 10_000 },
  );
  if (new URL(other.url()).search !== otherLink) throw new Error(`the other window moved: ${otherLink} -> ${new URL(other.url()).search}`);
  if (/(^|&)f=/.test(new URL(other.url()).search.slice(1))) throw new Error("the curveball reached the other window");
  t.ok(`Show (?${shown}) and the curveball reached ${theirs} only; ${mine} still shows ${otherLink} (${await status(kit)})`);

  // The candidate's window closes: the kit says it is gone, and a message
  // sent then is not acknowledged.
  await candidate.close();
  await kit.locator('[data-pair-alive="0"]').waitFor({ timeout: 10_000 });
  const gone = (await kit.locator("[data-pair-alive]").textContent()).trim();
  await kit.locator('[data-curveball="holder"]').click();
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Not arrived"), null, { timeout: 10_000 });
  t.ok(`with the candidate's window closed the kit says "${gone}" and "${await status(kit)}"`);
  await kit.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "kit.png"), fullPage: true });
  await kit.close();
  t.noProblems("the kit and the page's windows");
});
