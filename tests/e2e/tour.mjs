// The guided tour: a first visit lands on its first step; the whole tour
// walks by keyboard and by click; at every step the number the step points
// at reads as pending, never 0, until its event has happened, and at the
// end it is on screen, highlighted, and the simulation's (stampede-sim --url
// of the step's own link); the holder-crash step stops mid-stall; deep links open their step;
// the sandbox is one click away and keeps the scenario. Screenshots of a
// step at each level, desktop and phone.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simAt = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));

// A counter as the words write it (the core's lesson::shown): 8000 and 56.319 ms.
const shown = (metric, v) => (metric.endsWith("_ms") ? `${Number.isInteger(v) ? v.toFixed(1) : v} ms` : String(v));

const stepName = (page) => page.locator("[data-tour-step]").getAttribute("data-tour-step");

async function checkStep(t, want) {
  const { page } = t;
  await page.waitForFunction((w) => document.querySelector("[data-tour-step]")?.dataset.tourStep === w, want, {
    timeout: 10_000,
  });
  const number = page.locator(".tour-number");
  const metric = await number.getAttribute("data-metric");
  if ((await number.getAttribute("data-highlight")) === null) throw new Error(`${want}: the number is not highlighted`);
  // While the run plays, the number never states a 0 the end contradicts:
  // until its event has happened it reads as pending.
  for (let i = 0; i < 5; i++) {
    const [text, pending] = await number.evaluate((el) => [el.textContent.trim(), el.dataset.pending]);
    if (text === "0") throw new Error(`${want}: the number reads 0 mid-run`);
    if ((text === "…") !== (pending === "1")) throw new Error(`${want}: "${text}" with data-pending=${pending}`);
    await page.waitForTimeout(40);
  }
  // The run to its end (End), then the number must be the simulation's.
  const query = new URL(page.url()).search;
  await page.keyboard.press("End");
  const want_value = shown(metric, simAt(query)[metric]);
  try {
    await page.waitForFunction(
      (v) => document.querySelector(".tour-number")?.textContent.trim() === v,
      want_value,
      { timeout: 60_000 },
    );
  } catch {
    throw new Error(`${want}: the step shows ${metric} = ${await number.textContent()}, stampede-sim --url '${query}' says ${want_value}`);
  }
  if (!(await number.isVisible())) throw new Error(`${want}: the number is not visible`);
  const box = await number.boundingBox();
  const vp = page.viewportSize();
  if (!box || box.y < 0 || box.y + box.height > vp.height) throw new Error(`${want}: the number is off screen (${JSON.stringify(box)})`);
  // Every other element showing that counter is outlined too.
  const others = await page.locator(`[data-metric="${metric}"]:not(.tour-number)`).count();
  const lit = await page.locator(`[data-metric="${metric}"][data-highlight]:not(.tour-number)`).count();
  if (others !== lit) throw new Error(`${want}: ${lit} of ${others} other ${metric} elements highlighted`);
  t.ok(`${want}: ${metric} = ${want_value} on screen and highlighted, as stampede-sim says for ${query}`);
}

await spec("tour", async (t) => {
  const { page } = t;

  // A first visit: no link at all.
  await page.goto(process.env.E2E_URL, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  if ((await stepName(page)) !== "basics/1") throw new Error(`a first visit opens ${await stepName(page)}`);
  if (!page.url().includes("#tour/basics/1")) throw new Error(`the link does not name the step: ${page.url()}`);
  if (await page.locator(".panel.knobs").isVisible()) throw new Error("the knobs show during the tour");
  t.ok("a first visit lands on the tour's first step, not on the knobs");
  await t.shot("tour-basics-desktop.png");

  // The whole tour, alternating keyboard and click.
  const names = [];
  const keys = ["ArrowRight", "PageDown", "click"];
  let k = 0;
  for (;;) {
    const name = await stepName(page);
    names.push(name);
    await checkStep(t, name);
    if (name === "solid/2") await t.shot("tour-solid-desktop.png");
    if (name === "deeper/3") await t.shot("tour-deeper-desktop.png");
    const next = page.locator(control("tour-next"));
    if (await next.isDisabled()) break;
    const how = keys[k++ % keys.length];
    if (how === "click") await next.click();
    else {
      await page.locator("body").click({ position: { x: 2, y: 2 } });
      await page.keyboard.press(how);
    }
    await page.waitForFunction((n) => document.querySelector("[data-tour-step]")?.dataset.tourStep !== n, name);
  }
  if (names.length < 20 || names[0] !== "basics/1" || !names.at(-1).startsWith("deeper/")) {
    throw new Error(`the walk went ${names.join(", ")}`);
  }
  t.ok(`walked all ${names.length} steps by arrows, Page Down and clicks`);

  // The holder-crash step plays to the middle of the stall and stops there,
  // with callers given up and the dead holder's claim still held.
  await page.goto(`${process.env.E2E_URL}#tour/deeper/11`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  // From another step the address changes only its hash (no new page):
  // wait for this step's own bar before pressing its button, or a loaded
  // machine presses the step before's (and reads its revealed number).
  // Its prediction open (its own question, not the step before's), then
  // "just show me" plays it, and it runs to its pause at 13 s.
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "deeper/11" && /claim holder crashes/.test(document.querySelector(".tour-question")?.textContent ?? "") && document.querySelector('[data-control="predict-show"]')?.offsetParent, null, { timeout: 30_000 });
  await page.waitForTimeout(300);
  await page.locator(control("predict-show")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-control="timeline"]')?.value) >= 12_000 && document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  await t.untilEnd(60_000);
  const stopped = await page.evaluate(() => ({
    clock: document.querySelector('[data-control="timeline"]')?.value,
    number: document.querySelector(".tour-number")?.textContent.trim(),
    lesson: document.querySelector("[data-lesson]")?.textContent.trim(),
  }));
  if (!(Number(stopped.number) > 0) || !stopped.lesson.includes("have given up so far")) {
    throw new Error(`the holder-crash step stopped at ${JSON.stringify(stopped)}`);
  }
  await t.shot("tour-holder-crash-paused.png");
  t.ok(`the holder-crash step stops mid-stall: ${stopped.number} callers given up, "${stopped.lesson.slice(0, 60)}…"`);
  await page.goto(`${process.env.E2E_URL}#tour/${names.at(-1)}`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });

  // Back: by key and by click.
  await page.keyboard.press("PageUp");
  await page.waitForFunction((n) => document.querySelector("[data-tour-step]")?.dataset.tourStep === n, names.at(-2));
  await page.keyboard.press("ArrowLeft");
  await page.locator(control("tour-back")).click();
  await page.waitForFunction((n) => document.querySelector("[data-tour-step]")?.dataset.tourStep === n, names.at(-4));
  t.ok("Page Up, the left arrow and Back go back a step each");

  // The level picker and the deep links.
  await page.locator(control("tour-level")).selectOption("solid");
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "solid/1");
  for (const link of ["solid/3", "deeper/1", "basics/4"]) {
    await page.goto(`${process.env.E2E_URL}?seed=1#tour/${link}`, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    if ((await stepName(page)) !== link) throw new Error(`#tour/${link} opened ${await stepName(page)}`);
  }
  t.ok("the level picker and the deep links #tour/solid/3, #tour/deeper/1, #tour/basics/4 open their steps");

  // The sandbox, one click away, on the step's scenario.
  const before = new URL(page.url()).search;
  await page.locator(control("sandbox")).click();
  await page.waitForFunction(() => !location.hash);
  if (!(await page.locator(".tour").isHidden())) throw new Error("the tour bar stays after leaving");
  if (new URL(page.url()).search !== before) throw new Error(`the sandbox changed the scenario: ${before} -> ${page.url()}`);
  await page.locator(".panel.knobs").waitFor({ state: "visible" });
  t.ok("Open the sandbox: the knobs come back on the step's own scenario");
  // A share link opens the sandbox, not the tour.
  await page.goto(`${process.env.E2E_URL}?preset=hang`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  if (!(await page.locator(".tour").isHidden())) throw new Error("a share link opened the tour");
  await page.locator(control("tour")).click();
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "basics/1");
  t.ok("a share link opens the sandbox; the Guided tour button starts the tour");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${process.env.E2E_URL}#tour/solid/1`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) throw new Error(`phone: ${overflow}px of horizontal overflow`);
  await t.shot("tour-phone.png");
  t.ok("phone 390x844: the tour bar fits");
  t.noProblems("at the end");
});
