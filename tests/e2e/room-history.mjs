// Keeping your place (issue 18 §3): each tour step and each view is a
// history entry (Back and Forward work); at=MS opens a link at a moment,
// paused, or playing with play=1; a moment paused on comes back with Back;
// tour -> sandbox -> Back returns to the step; a question's answer is still
// open after following its link and coming back.
import { control, spec, baseUrl } from "./lib/harness.mjs";

const step = (page) => page.evaluate(() => (document.querySelector("section.tour")?.hidden ? null : document.querySelector("[data-tour-step]")?.dataset.tourStep));
const until = (page, want) =>
  page.waitForFunction((want) => {
    const s = document.querySelector("section.tour");
    const at = s && !s.hidden ? document.querySelector("[data-tour-step]")?.dataset.tourStep : null;
    return at === want;
  }, want, { timeout: 30_000 });
const playing = (page) => page.locator(control("play")).getAttribute("aria-pressed");

await spec("room-history", async (t) => {
  const { page } = t;
  // A moment, paused and playing.
  await t.open("preset=burst&at=120");
  await t.expectMetric("now_ms", "120.0", "at=120 opens the run at 120 ms");
  await page.waitForTimeout(500);
  if ((await playing(page)) !== "false" || (await t.text("now_ms")) !== "120.0") throw new Error("at= does not wait paused");
  t.ok("at=120 opens at 120 ms, paused");
  await t.open("preset=burst&at=120&play=1");
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]').textContent) > 120, null, { timeout: 20_000 });
  if ((await playing(page)) !== "true") throw new Error("play=1 does not play on");
  t.ok("at=120&play=1 plays on from 120 ms");
  await t.open("preset=burst&at=oops");
  if (!(await page.locator('[role="alert"]').textContent()).includes("at")) throw new Error("a bad at= is not said");
  t.ok("a bad at= is said in the banner, and the run opens at t = 0");

  // Tour steps are history entries.
  await page.goto(`${baseUrl}#tour/basics/1`);
  await until(page, "basics/1");
  await page.locator(control("tour-next")).click();
  await until(page, "basics/2");
  await page.locator(control("tour-next")).click();
  await until(page, "basics/3");
  await page.goBack();
  await until(page, "basics/2");
  await page.goBack();
  await until(page, "basics/1");
  await page.goForward();
  await until(page, "basics/2");
  t.ok("tour steps: Back goes 3 → 2 → 1, Forward to 2");

  // A moment paused on in a step comes back with Back.
  // The first key answers the step's question ("just show me", and it
  // plays); the next pauses at the next marker.
  await page.keyboard.press("n");
  await page.waitForTimeout(500);
  await page.keyboard.press("n");
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]').textContent) > 0 && document.querySelector('[data-control="play"]').getAttribute("aria-pressed") === "false", null, { timeout: 30_000 });
  await page.waitForTimeout(300);
  const moment = await t.text("now_ms");
  await page.waitForFunction(() => /[?&]at=\d+/.test(location.search));
  // Out to the sandbox and back: the step and its moment.
  await page.locator(control("sandbox")).click();
  await until(page, null);
  await page.goBack();
  await until(page, "basics/2");
  await page.waitForFunction((m) => Math.abs(Number(document.querySelector('[data-metric="now_ms"]').textContent) - Number(m)) < 1.01, moment, { timeout: 20_000 });
  if ((await playing(page)) !== "false") throw new Error("the moment comes back playing");
  t.ok(`tour → sandbox → Back: step basics/2 again, paused at ${moment} ms as it was left`);

  // Views: sandbox → A/B view → Back → sandbox.
  await page.locator(control("sandbox")).click();
  await until(page, null);
  await page.locator(control("compare")).click();
  await page.waitForSelector(".ab-side");
  await page.goBack();
  await page.waitForSelector(".ab-side", { state: "detached" });
  await page.goForward();
  await page.waitForSelector(".ab-side");
  t.ok("the A/B view is a history entry: Back leaves it, Forward opens it again");

  // A question's answer stays open after following its link.
  await t.open("preset=burst");
  await page.evaluate(() => {
    const d = document.querySelector('details[data-question="1"]');
    d.open = true;
  });
  await page.waitForTimeout(100);
  await page.locator('details[data-question="1"] .see a').first().click();
  await page.waitForFunction(() => location.search.includes("remember-failure"));
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame);
  await page.goBack();
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame && !location.search.includes("remember-failure"));
  await page.waitForFunction(() => document.querySelector('details[data-question="1"]')?.open, null, { timeout: 10_000 });
  t.ok("a question's answer is still open after following its link and coming back");
  t.noProblems("at the end");
});
