// The interviewer's kit (?kit=1) in a second window of the same browser,
// beside the candidate's page: it shows the card's three levels, the red
// flags and the follow-ups; a curveball thrown from it reaches the
// candidate's running run without a restart (the clock does not go back),
// the fault's counter rises after it, and the candidate's link afterwards
// replays the same run (the same numbers as stampede-sim --url).

import { execFileSync } from "node:child_process";
import path from "node:path";
import { spec, root, baseUrl, metric } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simulate = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));

await spec("kit", async (t) => {
  const { page } = t;
  // The candidate: steady traffic with both layers, keys expiring all along.
  await t.open("preset=jitter&c=inner&i=6&t=30&seed=2");
  const kit = await page.context().newPage();
  kit.on("console", (m) => m.type() === "error" && t.problems.push(`kit console error: ${m.text()}`));
  kit.on("pageerror", (e) => t.problems.push(`kit exception: ${e.message}`));
  await kit.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await kit.locator("[data-kit]").waitFor({ timeout: 30_000 });
  for (const level of ["basics", "solid", "deeper"]) {
    const n = await kit.locator(`[data-level="${level}"] li`).count();
    if (n < 3) throw new Error(`${level}: ${n} points`);
  }
  t.ok("the three levels, each naming at least three points");
  const flags = await kit.locator("[data-red-flag]").count();
  if (flags !== 5) throw new Error(`${flags} red flags`);
  const follow = await kit.locator("[data-follow-up] strong").allTextContents();
  if (follow.length < 5 || follow.some((q) => !q.endsWith("?"))) throw new Error(`follow-ups: ${follow.join(" | ")}`);
  t.ok(`5 red flags and ${follow.length} follow-ups, worded as the page's questions`);
  if (await kit.locator(".reference-area").isVisible()) throw new Error("the kit's window shows the reference");
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Candidate's window"), null, { timeout: 10_000 });
  t.ok("the candidate's window answers the kit");

  // Let the run play a few seconds in, pause it, then throw.
  await page.waitForFunction((sel) => Number(document.querySelector(sel)?.textContent) > 3000, metric("now_ms"), { timeout: 60_000 });
  await page.keyboard.press("Space");
  const before = await t.number("now_ms");
  const quietErrors = await t.number("redis_errors").catch(() => 0);
  await kit.locator('[data-curveball="redis"]').click();
  await kit.waitForFunction(() => document.querySelector("[data-kit-status]")?.textContent.startsWith("Thrown: redis"), null, { timeout: 10_000 });
  await page.waitForFunction(() => /(^|&)f=redis/.test(location.search.slice(1)), null, { timeout: 10_000 });
  const after = await t.number("now_ms");
  if (after < before) throw new Error(`the clock went back: ${before} -> ${after}`);
  t.ok(`the curveball lands at ${before} ms without a restart (clock ${after} ms)`);
  const link = new URL(page.url()).search.slice(1);
  await page.keyboard.press("End");
  await t.untilEnd(120_000);
  // The run was paused, so "play" reads paused at once: wait for the seek
  // to the end to have caught up, its counters numbers again (the flake:
  // redis_errors read as "…" mid-replay).
  await page
    .waitForFunction(
      ([sel, quiet]) => Number(document.querySelector(sel)?.textContent) > quiet,
      [metric("redis_errors"), quietErrors],
      { timeout: 120_000 },
    )
    .catch(() => {});
  const errors = await t.number("redis_errors");
  if (!(errors > quietErrors)) throw new Error(`redis_errors ${quietErrors} -> ${errors}`);
  const want = simulate(link);
  for (const m of ["redis_errors", "recomputes", "claim_attempts"]) {
    await t.expectMetric(m, String(want[m]), `the link ${link} replays the run`);
  }
  await kit.screenshot({ path: path.join(root, "tests", "e2e", "screenshots", "kit.png"), fullPage: true });
  await kit.close();
  t.noProblems("the kit and the candidate's window");
});
