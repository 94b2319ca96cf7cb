// For a training room: presenter mode and its keys (p, ., digits, ?, Esc,
// End), controls that hide while the pointer rests, a resize mid-talk, and
// reduced motion: no animation frames of the fleet, the same end values.
import { control, spec } from "./lib/harness.mjs";

const bodyHas = (page, c) => page.evaluate((c) => document.body.classList.contains(c), c);

await spec("room", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1920, height: 1080 });
  await t.open();

  await page.keyboard.press("p");
  if (!(await bodyHas(page, "presenter"))) throw new Error("p does not start presenter mode");
  if ((await page.locator(control("presenter")).getAttribute("aria-pressed")) !== "true") throw new Error("presenter aria-pressed");
  if (!(await page.locator(".proof-value").isVisible())) throw new Error("presenter mode hides the big number");
  if (await page.locator(".panel.knobs").isVisible()) throw new Error("presenter mode shows the knobs");
  t.ok("p: presenter mode, the fleet and one big number, no knobs");

  // The pointer rests: the controls step back; it moves: they return.
  await page.mouse.move(400, 400);
  await page.waitForFunction(() => document.body.classList.contains("pointer-idle"), null, { timeout: 6000 });
  await page.mouse.move(420, 410);
  if (await bodyHas(page, "pointer-idle")) throw new Error("moving the pointer does not bring the controls back");
  t.ok("the controls hide while the pointer rests and return when it moves");

  // '.' (a clicker's button) plays and pauses, like Space.
  const pressed = () => page.locator(control("play")).getAttribute("aria-pressed");
  const before = await pressed();
  await page.keyboard.press(".");
  // The button's state is written by the page's next update, not in the
  // key's own handler: wait for it (a loaded machine's frame comes late).
  await page
    .waitForFunction(([sel, was]) => document.querySelector(sel)?.getAttribute("aria-pressed") !== was, [control("play"), before], { timeout: 10_000 })
    .catch(() => {
      throw new Error("'.' does not toggle play");
    });
  await page.keyboard.press(".");
  t.ok("'.' plays and pauses");

  // Digits pick the card's rows.
  for (const [key, want] of [["2", "40"], ["5", "1"], ["1", "8000"]]) {
    await page.keyboard.press(key);
    await page.waitForTimeout(200);
    await page.keyboard.press("End");
    await t.expectMetric("recomputes", want, `digit ${key}`, 60_000);
  }
  const attempts = await t.text("claim_attempts");
  await page.keyboard.press("5");
  await page.waitForTimeout(200);
  await page.keyboard.press("End");
  await t.expectMetric("claim_attempts", "8000", "digit 5: the claim outside singleflight", 60_000);
  t.ok(`digits 1, 2, 5 pick the card's rows (claim attempts before: ${attempts})`);
  await page.mouse.move(500, 500);
  await t.shot("presenter-1920x1080.png");

  // A resize mid-talk.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.waitForTimeout(400);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) throw new Error(`after a resize: ${overflow}px of horizontal overflow`);
  const canvasW = await page.locator(".stage-canvas canvas").first().evaluate((c) => c.getBoundingClientRect().width);
  if (canvasW < 300 || canvasW > 1280) throw new Error(`the fleet is ${canvasW}px wide after the resize`);
  t.ok("a resize mid-talk: the fleet refits, nothing overflows");

  // ? lists every shortcut; Esc closes it.
  await page.keyboard.press("?");
  const overlay = page.locator(".shortcuts");
  if (!(await overlay.isVisible())) throw new Error("? does not show the shortcuts");
  const text = await overlay.textContent();
  for (const k of ["Space", "Page Down", "End", "1 to 5", "p", "f", "?"]) {
    if (!text.includes(k)) throw new Error(`the shortcuts do not list ${k}`);
  }
  await page.keyboard.press("Escape");
  if (await overlay.isVisible()) throw new Error("Esc does not close the shortcuts");
  t.ok("? lists every shortcut; Esc closes the list");
  await page.keyboard.press("p");
  if (await bodyHas(page, "presenter")) throw new Error("p does not leave presenter mode");
  t.ok("p again leaves presenter mode");

  // Reduced motion: the run jumps to its end, painted only once settled.
  await page.emulateMedia({ reducedMotion: "reduce" });
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open();
  if ((await page.locator(control("reduced-motion")).getAttribute("aria-pressed")) !== "true") {
    throw new Error("prefers-reduced-motion does not switch reduced motion on");
  }
  await t.untilEnd();
  await t.expectMetric("recomputes", "1", "reduced motion: the same end value");
  await t.expectMetric("claim_attempts", "40", "reduced motion: the same end value");
  const paints = Number(await page.evaluate(() => document.documentElement.dataset.settledPaints));
  if (!(paints >= 1 && paints <= 3)) throw new Error(`reduced motion painted the fleet ${paints} times`);
  t.ok(`reduced motion: the fleet painted ${paints} time(s), never mid-movement, and the numbers end where they always do`);
  await page.locator(control("reduced-motion")).click();
  if ((await page.locator(control("reduced-motion")).getAttribute("aria-pressed")) !== "false") throw new Error("the switch does not turn it off");
  t.ok("the reduced-motion switch turns it off");
  t.noProblems("at the end");
});
