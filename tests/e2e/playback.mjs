// The clock: play, pause, step, scrub back and forth, restart, replay and the
// speed control change virtual time as expected, and the same virtual time
// always shows the same numbers.

import { spec, control, metric } from "./lib/harness.mjs";

await spec("playback", async (t) => {
  const { page } = t;
  const now = () => t.number("now_ms");
  const pressed = async () => page.locator(control("play")).getAttribute("aria-pressed");

  // A 2 s recompute: the run lasts long enough to pause it mid-way.
  await t.open("rc=2000&speed=0.25");
  await page.waitForFunction((sel) => Number(document.querySelector(sel)?.textContent) > 0, metric("now_ms"));
  const a = await now();
  await page.waitForTimeout(300);
  const b = await now();
  if (!(b > a)) throw new Error(`playing: the clock should move (${a} -> ${b})`);
  if (b - a > 300 * 0.25 * 2) throw new Error(`at 0.25x, 300 ms should be ~75 virtual ms, got ${b - a}`);
  t.ok(`playing at 0.25x moves the clock (${a} -> ${b} ms)`);

  await page.click(control("play"));
  if ((await pressed()) !== "false") throw new Error("play did not toggle to paused");
  const p1 = await now();
  await page.waitForTimeout(300);
  const p2 = await now();
  if (p1 !== p2) throw new Error(`paused: the clock moved ${p1} -> ${p2}`);
  t.ok("pause stops the clock");

  await page.click(control("step"));
  await page.waitForFunction(([sel, was]) => Number(document.querySelector(sel)?.textContent) > was, [metric("now_ms"), p2]);
  const s1 = await now();
  if (s1 < p2 + 1) throw new Error(`step should move at least 1 ms: ${p2} -> ${s1}`);
  if ((await pressed()) !== "false") throw new Error("step should leave the clock paused");
  t.ok(`step moves a tenth of the window or to the next event (${p2} -> ${s1} ms) and stays paused`);

  // Scrub forward, read, go further, come back: the same numbers.
  const scrub = async (ms) => {
    await page.locator(control("timeline")).fill(String(ms));
    await page.waitForFunction(
      ([sel, want]) =>
        document.querySelector(sel)?.textContent === want && !document.querySelector(".catching-up:not([hidden])"),
      [metric("now_ms"), ms.toFixed(1)],
      { timeout: 20_000 },
    );
  };
  const snapshot = () =>
    page.$$eval("[data-metric]", (els) => els.map((e) => `${e.dataset.metric}=${e.textContent.trim()}`).join(" "));
  await scrub(150);
  const at150 = await snapshot();
  await scrub(200);
  const at200 = await snapshot();
  if (at150 === at200) throw new Error("the numbers at 150 ms and 200 ms should differ");
  await scrub(150);
  const again = await snapshot();
  if (again !== at150) throw new Error(`scrubbing back to 150 ms shows different numbers:\n${at150}\n${again}`);
  t.ok("scrubbing forward and back shows the same numbers at the same virtual time");
  if ((await pressed()) !== "false") throw new Error("scrubbing should pause");

  await page.click(control("restart"));
  await t.expectMetric("now_ms", "0.0", "restart goes back to t = 0");
  if ((await pressed()) !== "false") throw new Error("restart should leave the clock paused");
  await page.click(control("replay"));
  if ((await pressed()) !== "true") throw new Error("replay should play");
  await page.waitForFunction((sel) => Number(document.querySelector(sel)?.textContent) > 0, metric("now_ms"));
  t.ok("replay plays the same seed from t = 0");

  // The speed slider is logarithmic: its ends are 0.01x and 100x.
  await page.locator(control("speed")).fill("100");
  const label = (await page.locator(".speed output").textContent()) ?? "";
  if (label.trim() !== "100×") throw new Error(`speed at its top should be 100×, shows ${label}`);
  await t.untilEnd();
  t.ok("the speed slider reaches 100× and the run plays to its end");
  if (!(await page.evaluate(() => location.search.includes("speed=100")))) {
    throw new Error("the speed is not in the URL");
  }
  t.ok("the speed lives in the URL");

  // A new seed changes the seed and restarts.
  const seedBefore = await page.locator(control("seed")).inputValue();
  await page.click(control("new-seed"));
  const seedAfter = await page.locator(control("seed")).inputValue();
  if (seedAfter === seedBefore) throw new Error("new seed kept the seed");
  t.ok(`new seed: ${seedBefore} -> ${seedAfter}`);
  // Keyboard: space plays and pauses, the right arrow steps (slowly, so
  // the run does not end between two checks).
  await page.locator(control("speed")).fill("20");
  await page.click(control("restart"));
  await page.evaluate(() => document.activeElement?.blur());
  const becomes = (want, why) =>
    page
      .waitForFunction(
        ([sel, want]) => document.querySelector(sel)?.getAttribute("aria-pressed") === want,
        [control("play"), want],
        { timeout: 3_000 },
      )
      .catch(() => {
        throw new Error(why);
      });
  await page.keyboard.press("Space");
  await becomes("true", "space should play");
  await page.keyboard.press("Space");
  await becomes("false", "space again should pause");
  // The arrows from t = 0: at 20x the run can end between two key presses
  // on a loaded machine, and at its end the right arrow has nowhere to go.
  await page.click(control("restart"));
  await t.expectMetric("now_ms", "0.0", "restart goes back to t = 0");
  await page.evaluate(() => document.activeElement?.blur());
  const k1 = await now();
  const moved = (cmp, was) =>
    page.waitForFunction(
      ([sel, was, cmp]) => {
        const v = Number(document.querySelector(sel)?.textContent);
        return cmp === ">" ? v > was : v < was;
      },
      [metric("now_ms"), was, cmp],
    );
  await page.keyboard.press("ArrowRight");
  await moved(">", k1);
  const k1b = await now();
  await page.keyboard.press("ArrowRight");
  await moved(">", k1b);
  const k2 = await now();
  await page.keyboard.press("ArrowLeft");
  await moved("<", k2);
  t.ok(`space plays and pauses, the arrows step forward and back (${k1} -> ${k2} -> ${await now()} ms)`);
  // Space plays and pauses after clicking any transport button: a focused
  // button must not swallow it (it would press itself again).
  for (const name of ["restart", "step", "replay", "play"]) {
    await page.click(control(name));
    const was = await pressed();
    await page.keyboard.press("Space");
    await becomes(was === "true" ? "false" : "true", `space after clicking ${name} should toggle play`);
  }
  // A picker keeps Up and Down but gives Left and Right to the clock.
  await page.focus(control("preset"));
  const chosen = await page.locator(control("preset")).inputValue();
  await page.keyboard.press("ArrowRight");
  if ((await page.locator(control("preset")).inputValue()) !== chosen) {
    throw new Error("the right arrow changed the preset picker");
  }
  t.ok("space toggles play after clicking each transport button; arrows on the picker step the clock");

  // Next event: the clock lands on each marker of the timeline in turn.
  await t.open("preset=holder-crash&speed=100");
  await t.untilEnd();
  await page.click(control("restart"));
  const marks = await page.$$eval("[data-marker-t]", (els) => els.map((e) => Number(e.dataset.markerT)));
  const story = await page.$$eval("[data-marker-t]", (els) => els.map((e) => e.textContent));
  for (const want of ["key expires", "holder crashes", "dead claim expires", "value written"]) {
    if (!story.some((s) => s.startsWith(want))) throw new Error(`no "${want}" marker: ${story.join("; ")}`);
  }
  for (const m of [...new Set(marks)].filter((m) => m > 0)) {
    await page.click(control("next-event"));
    const want = (m / 1000).toFixed(1);
    await page
      .waitForFunction(([sel, want]) => document.querySelector(sel)?.textContent.trim() === want, [metric("now_ms"), want], {
        timeout: 10_000,
      })
      .catch(async () => {
        throw new Error(`next event should land on ${want} ms, the clock shows ${await now()}`);
      });
  }
  if (!(await page.locator(control("next-event")).isDisabled())) throw new Error("next event after the last marker");
  t.ok(`next event lands on each of ${marks.length} markers: ${story.join("; ")}`);
  t.noProblems("while driving the clock");
});
