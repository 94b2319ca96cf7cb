// One set of keys in every view (issue 18 §2): the sandbox's Page Up/Down
// step the clock and never scroll the page; the A/B view answers Space, '.',
// End, the arrows, Page Up/Down and n on its one clock; a digit in the tour
// says it left the tour and offers the way back; entering and leaving the
// A/B view leaves no console error. Every room action has a key, listed by
// `?` (issue 28): r records a clip and stops it, + adds the view to the
// list, h shows a drill's next hint and s its solution; a QR code of this
// machine's own address says a phone cannot open it.
import { control, spec } from "./lib/harness.mjs";

const abNow = async (page) => {
  const t = await page.locator(".ab-transport .clock").textContent();
  const m = /t = ([\d.]+) ms/.exec(t ?? "");
  if (!m) throw new Error(`the A/B clock reads ${JSON.stringify(t)}`);
  return Number(m[1]);
};
/// Waits until the A/B clock, caught up (a seek back replays, and
/// "catching up…" shows meanwhile), is below (`dir` < 0) or above `than`;
/// returns it.
const abSettles = async (page, dir, than) => {
  await page.waitForFunction(
    ([dir, than]) => {
      const m = /t = ([\d.]+) ms/.exec(document.querySelector(".ab-transport .clock")?.textContent ?? "");
      const caught = document.querySelector(".ab-transport .catching-up")?.hidden;
      return m && caught && (dir < 0 ? Number(m[1]) < than : Number(m[1]) > than);
    },
    [dir, than],
  );
  return abNow(page);
};
const abPlaying = (page) => page.locator(control("compare-play")).getAttribute("aria-pressed");
/// The play button's state once the key's update has been drawn (it lands a
/// task after the key, not at once), or its state after 5 s.
const abBecomes = async (page, want) => {
  try {
    await page.waitForFunction(
      ([sel, want]) => document.querySelector(sel)?.getAttribute("aria-pressed") === want,
      [control("compare-play"), want],
      { timeout: 5_000 },
    );
  } catch {}
  return abPlaying(page);
};

await spec("room-keys", async (t) => {
  const { page } = t;
  await t.open("preset=burst");
  await page.keyboard.press(" ");
  await page.waitForFunction(() => document.querySelector('[data-control="play"]').getAttribute("aria-pressed") === "false");
  const at = await t.number("now_ms");
  await page.keyboard.press("PageDown");
  await page.waitForFunction((at) => Number(document.querySelector('[data-metric="now_ms"]').textContent) > at, at);
  const after = await t.number("now_ms");
  await page.keyboard.press("PageUp");
  await page.waitForFunction((a) => Number(document.querySelector('[data-metric="now_ms"]').textContent) < a, after);
  if ((await page.evaluate(() => scrollY)) !== 0) throw new Error(`Page Up/Down scrolled the page to ${await page.evaluate(() => scrollY)}`);
  t.ok(`sandbox: Page Down steps the clock (${at} → ${after} ms), Page Up steps it back, the page does not scroll`);

  // Into the A/B view and out again, five times: no console error.
  for (let i = 0; i < 5; i++) {
    await page.locator(control("compare")).click();
    await page.waitForSelector(".ab-side canvas");
    await page.waitForTimeout(300);
    await page.locator(control("compare")).click();
    await page.waitForSelector(".ab-side", { state: "detached" });
    await page.waitForTimeout(200);
  }
  t.noProblems("entering and leaving the A/B view");
  t.ok("entering and leaving the A/B view five times: no console error");

  // The A/B view answers the sandbox's keys.
  await t.open("cmp=layered");
  await page.waitForFunction(() => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "true");
  await page.keyboard.press(" ");
  if ((await abBecomes(page, "false")) !== "false") throw new Error("Space does not pause the A/B view");
  await page.keyboard.press(".");
  if ((await abBecomes(page, "true")) !== "true") throw new Error("'.' does not play the A/B view");
  t.ok("A/B view: Space pauses, '.' plays");
  await page.keyboard.press("End");
  await page.waitForFunction(() => document.querySelector('[data-side="a"] [data-metric="recomputes"]')?.textContent === "40", null, { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('[data-side="b"] [data-metric="recomputes"]')?.textContent === "1", null, { timeout: 30_000 });
  // Playback stops once both sides are at their end: the clock is the later end.
  if ((await abBecomes(page, "false")) !== "false") throw new Error("End never reached the end");
  const end = await abNow(page);
  t.ok(`A/B view: End runs both sides to their end (A 40, B 1 recomputes at ${end} ms)`);
  await page.keyboard.press("ArrowLeft");
  const back = await abSettles(page, -1, end);
  if ((await abBecomes(page, "false")) !== "false") throw new Error("← does not pause the A/B view");
  await page.keyboard.press("PageUp");
  const back2 = await abSettles(page, -1, back);
  await page.keyboard.press("ArrowRight");
  const fwd = await abSettles(page, 1, back2);
  // Paused mid-run, the address keeps the A/B view's moment (whole ms).
  try {
    await page.waitForFunction((ms) => new URL(location.href).searchParams.get("at") === String(ms), Math.floor(fwd), { timeout: 5_000 });
  } catch {
    throw new Error(`paused at ${fwd} ms, the A/B view's address is ${page.url()}`);
  }
  t.ok(`A/B view: ← and Page Up step the one clock back (${end} → ${back} → ${back2} ms), → forward, paused; the address keeps at=${Math.floor(fwd)}`);
  await page.locator(control("compare-restart")).click();
  await page.keyboard.press(" ");
  const before = await abNow(page);
  await page.keyboard.press("n");
  await abSettles(page, 1, before);
  if ((await abBecomes(page, "false")) !== "false") throw new Error("n does not pause the A/B view");
  t.ok(`A/B view: n pauses at the next marker (${await abNow(page)} ms)`);
  if ((await page.evaluate(() => scrollY)) !== 0) throw new Error("a key scrolled the A/B view");

  // A digit in the tour says it left the tour, with the way back.
  await page.goto(new URL("#tour/basics/2", page.url().split(/[?#]/)[0]).href);
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "basics/2", null, { timeout: 30_000 });
  await page.keyboard.press("2");
  const toast = page.locator("[data-toast]");
  await toast.waitFor({ state: "visible" });
  const said = (await toast.textContent()) ?? "";
  if (!/Key 2 left the tour/.test(said)) throw new Error(`the toast says ${JSON.stringify(said)}`);
  if (await page.locator("section.tour").isVisible()) throw new Error("the digit did not open the sandbox");
  await page.locator(control("toast-back")).click();
  await page.waitForFunction(() => document.querySelector("[data-tour-step]")?.dataset.tourStep === "basics/2" && !document.querySelector("section.tour").hidden);
  t.ok(`a digit in the tour says so ("${said.trim()}") and its button goes back to the step`);

  // The room's actions by key, as listed by `?`.
  await t.open("preset=burst&seed=1");
  await page.keyboard.press("?");
  const listed = (await page.locator(".shortcuts").textContent()) ?? "";
  for (const [key, what] of [["r", "record a clip"], ["+", "add this view"], ["h", "next hint"], ["s", "show the solution"], ["A to D", "vote"]]) {
    if (!listed.includes(key) || !listed.includes(what)) throw new Error(`? does not list ${key} (${what}): ${listed.slice(0, 200)}`);
  }
  await page.keyboard.press("Escape");
  const record = page.locator(control("clip"));
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelector('[data-control="clip"]')?.getAttribute("aria-pressed") === "true", null, { timeout: 10_000 });
  await page.waitForTimeout(1200);
  await page.keyboard.press("r");
  const link = page.locator("[data-clip-download]");
  await link.waitFor({ state: "visible", timeout: 10_000 });
  const name = await link.getAttribute("download");
  if (!/^stampede-lab-burst-\d{4}-\d{2}-\d{2}-\d{4}\.webm$/.test(name ?? "")) throw new Error(`the clip is named ${name}`);
  if ((await record.getAttribute("aria-pressed")) !== "false") throw new Error("r did not stop the recording");
  t.ok(`r records a clip and r stops it: ${name}`);
  const items = () => page.locator("[data-playlist] [data-playlist-item]").count();
  const listed0 = await items();
  await page.keyboard.type("+");
  await page.waitForFunction((n) => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === n, listed0 + 1, { timeout: 10_000 });
  t.ok(`+ adds this view to the list (${listed0} → ${listed0 + 1} items)`);
  await t.open("drill=hot-key");
  await page.locator('[data-drill="hot-key"]').waitFor({ state: "visible" });
  await page.keyboard.press("h");
  await page.keyboard.press("h");
  await page.waitForFunction(() => document.querySelectorAll(".drill-hints li").length === 2, null, { timeout: 10_000 });
  await page.keyboard.press("s");
  await page.locator(".drill-reasoning").waitFor({ state: "visible", timeout: 10_000 });
  t.ok("in a drill, h shows the next hint (twice: two hints) and s the solution with its reasoning");

  // This machine's own address: a phone cannot open the code, and it says so.
  await page.keyboard.press("q");
  const warning = page.locator("[data-qr-overlay] [data-qr-warning]");
  await warning.waitFor({ state: "visible", timeout: 10_000 });
  const why = (await warning.textContent()) ?? "";
  if (!/127\.0\.0\.1 is this computer's own address/.test(why)) throw new Error(`the QR code's warning says ${JSON.stringify(why)}`);
  // A public address, kept: the code encodes it with this run's link, and
  // the warning goes.
  await page.locator("[data-qr-base-input]").fill("https://lab.example/stampede/");
  await page.locator("[data-qr-base] button").click();
  await page.waitForFunction(() => (document.querySelector("[data-qr-overlay] [data-qr]")?.dataset.qr ?? "").startsWith("https://lab.example/stampede/?"), null, { timeout: 10_000 });
  const encoded = await page.locator("[data-qr-overlay] [data-qr]").getAttribute("data-qr");
  if (!encoded.includes("drill=hot-key")) throw new Error(`the code on the public address lost the run's link: ${encoded}`);
  if (await warning.isVisible()) throw new Error("the warning stays on a public address");
  await page.keyboard.press("Escape");
  t.ok(`a QR code of 127.0.0.1 warns: "${why.slice(0, 60)}…"; with a public address kept it encodes ${encoded}`);
  t.noProblems("at the end");
});
