// One build, and nothing reloads; and the first screen before the wasm. Every address loads the one build's wasm
// once, with one page load; and every way out of the tour that once reloaded
// the page into a second build (the sandbox, "Add this view", Record clip,
// Your practice, `q`, a walk-through level that asks) now happens in the same
// document: a mark left on `window` before the click is still there after it,
// the page has loaded once, and no second wasm was fetched.
import { control, spec } from "./lib/harness.mjs";

const isWasm = (url) => /\.wasm$/.test(url);

// First visits, tour steps and everything else alike.
const ADDRESSES = [
  "",
  "#tour/basics/2",
  "?preset=naive&seed=3#tour/basics/2",
  "?present=1#tour/deeper",
  "?preset=naive",
  "#questions",
  "?drill=#tour/basics/1",
  "?kit=1#tour/basics/1",
  "?cmp=layering#tour/solid/2",
  "?seed=1",
];

await spec("builds", async (t) => {
  const { page } = t;
  const fetched = [];
  page.on("request", (r) => {
    if (isWasm(r.url())) fetched.push(r.url());
  });
  let loads = 0;
  page.on("load", () => (loads += 1));
  const base = process.env.E2E_URL;

  for (const address of ADDRESSES) {
    await page.goto("about:blank");
    fetched.length = 0;
    loads = 0;
    await page.goto(base + address, { waitUntil: "load" });
    // The kit's window draws no fleet: it is up once it says so.
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame || document.body.classList.contains("kit-window"), null, { timeout: 30_000 });
    await page.waitForTimeout(300);
    const name = address || "(a first visit)";
    if (fetched.length !== 1 || !/stampede-lab-[0-9a-f]{1,16}_bg\.wasm$/.test(fetched[0])) throw new Error(`${name}: fetched ${fetched.join(", ") || "no wasm"}, expected the one build's wasm once`);
    if (loads !== 1) throw new Error(`${name}: ${loads} page loads`);
    t.ok(`${address || "a first visit"}: the one build, its wasm fetched once, no reload`);
  }

  // The first screen before the wasm: the tour's first step as plain HTML,
  // answerable; the answer picked there is the one the page takes over.
  {
    let release;
    const gate = new Promise((r) => (release = r));
    await page.route(/\.wasm$/, async (route) => {
      await gate;
      await route.continue();
    });
    await page.goto("about:blank");
    await page.goto(base, { waitUntil: "domcontentloaded" });
    const title = (await page.locator("[data-first-screen] [data-first=title]").textContent()).trim();
    await page.locator("[data-first-screen] label", { hasText: /^12$/ }).click();
    if (!(await page.locator("input[name=first-pick][value='1']").isChecked())) throw new Error("the static option 12 is not picked");
    if (await page.evaluate(() => document.documentElement.dataset.firstFrame)) throw new Error("the wasm ran before it was let through");
    release();
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    if (await page.locator("[data-first-screen]").count()) throw new Error("the static first screen is still there under the page");
    await page.waitForFunction(() => /^Right: the run shows 12\./.test(document.querySelector(".tour-verdict")?.textContent ?? ""), null, { timeout: 60_000 });
    const pressed = await page.locator("[data-predict-option][aria-pressed=true]").textContent();
    if (!/12/.test(pressed)) throw new Error(`the page's pressed option is ${pressed}`);
    t.ok(`before the wasm, the first screen reads "${title}" and takes an answer (12); the page keeps it and says "Right: the run shows 12."`);

    let release2;
    const gate2 = new Promise((r) => (release2 = r));
    await page.unroute(/\.wasm$/);
    await page.route(/\.wasm$/, async (route) => {
      await gate2;
      await route.continue();
    });
    await page.goto("about:blank");
    await page.goto(base + "?preset=naive", { waitUntil: "domcontentloaded" });
    const said = await page.locator(".first-linked").isVisible();
    const step = await page.locator("[data-first-screen]").isVisible();
    release2();
    if (!said || step) throw new Error(`a link to a scenario, before the wasm: calm line ${said ? "shown" : "hidden"}, the tour's step ${step ? "shown" : "hidden"}`);
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await page.unroute(/\.wasm$/);
    t.ok("a link to a scenario, before the wasm: one calm line, not the tour's first step");
  }

  // A flow that must stay in the document it started in.
  // A fresh tab's state (the presenter mode of ?present=1 stays for a tab).
  const open = async (address) => {
    await page.evaluate(() => sessionStorage.clear()).catch(() => {});
    await page.goto("about:blank");
    await page.goto(base + address, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await page.evaluate(() => (window.__stayed = true));
    fetched.length = 0;
    loads = 0;
  };
  const stayed = async (why) => {
    await page.waitForTimeout(300);
    const still = await page.evaluate(() => window.__stayed === true);
    if (!still || loads !== 0 || fetched.length !== 0) throw new Error(`${why}: the page reloaded (${loads} loads, ${fetched.length} wasm fetches, mark ${still ? "kept" : "lost"})`);
  };

  const keysSaid = async () => {
    await page.keyboard.press("?");
    await page.locator(".shortcuts").waitFor({ state: "visible" });
    const said = await page.locator(".shortcuts dl").textContent();
    await page.keyboard.press("Escape");
    return said;
  };

  // Out of the tour: the sandbox, at the tour's scenario and moment (the
  // address keeps whole milliseconds; the page keeps the clock as it stood).
  await open("#tour/basics/2");
  const tourKeys = await keysSaid();
  if (!/the next tour step/.test(tourKeys) || !/a list open/.test(tourKeys)) throw new Error(`the tour's ? lists ${tourKeys}`);
  if (/loads the rest/.test(tourKeys)) throw new Error(`a key still says it loads the rest: ${tourKeys}`);
  t.ok("the tour's ? lists every key the page answers to, none of them loading anything");
  await page.locator(`${control("play")}:visible`).first().click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > 5, null, { timeout: 30_000 });
  await page.locator(`${control("play")}:visible`).first().click();
  // The moment in whole milliseconds, as the address keeps it once paused:
  // read once the address and the clock agree and stay so for two frames
  // (on a loaded machine a frame already on its way can still move the
  // clock, and the address with it, just after the pause).
  const moment = async () => {
    const agreed = () => {
      const at = new URL(location.href).searchParams.get("at");
      const now = Math.floor(Number(document.querySelector('[data-metric="now_ms"]')?.textContent));
      return at !== null && Number(at) === now;
    };
    for (;;) {
      await page.waitForFunction(agreed);
      const at = Number(new URL(page.url()).searchParams.get("at"));
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      if (await page.evaluate(agreed) && Number(new URL(page.url()).searchParams.get("at")) === at) return at;
    }
  };
  const before = await moment();
  const knobs = (u) => {
    const q = new URL(u).searchParams;
    q.delete("at");
    q.delete("play");
    return q.toString();
  };
  const scenario = knobs(page.url());
  await page.locator(control("sandbox")).click();
  await page.waitForFunction(() => !location.hash.startsWith("#tour"), null, { timeout: 10_000 });
  await stayed("Open the sandbox");
  if (knobs(page.url()) !== scenario) throw new Error(`the sandbox has ${knobs(page.url())}, the tour had ${scenario}`);
  await page.locator(control("instances")).first().waitFor({ state: "attached", timeout: 10_000 });
  try {
    await page.waitForFunction((b) => Math.floor(Number(document.querySelector('[data-metric="now_ms"]')?.textContent)) === b, before, { timeout: 10_000 });
  } catch {
    throw new Error(`the sandbox is at t = ${await t.text("now_ms")} ms (${page.url()}), the tour was at ${before} ms`);
  }
  t.ok(`Open the sandbox: the same document, the tour's scenario (${scenario}) and moment (t = ${before} ms), with its knobs`);

  // Add this view, mid-step: the tour step at its moment.
  await open("#tour/basics/3");
  if (await page.locator(control("predict-show")).isVisible()) await page.locator(control("predict-show")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > 5, null, { timeout: 30_000 });
  await page.keyboard.press(" ");
  await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false");
  const paused = await moment();
  await page.locator(control("more-controls")).click().catch(() => {});
  await page.locator(control("playlist-add")).click();
  await page.waitForFunction(() => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === 1, null, { timeout: 10_000 });
  const item = (await page.locator("[data-playlist] [data-playlist-item]").first().textContent()).trim();
  if (!item.includes(`at ${paused} ms`)) throw new Error(`the list's item reads ${JSON.stringify(item)}, the step was paused at ${paused} ms`);
  await stayed("Add this view");
  t.ok(`Add this view at ${paused} ms: the list holds the step there, in the same document`);

  // Record clip, from the tour.
  await open("#tour/basics/1");
  await page.locator(control("more-controls")).click().catch(() => {});
  await page.locator(control("clip")).click();
  await page.waitForFunction(() => (document.querySelector("[data-clip-length]")?.textContent ?? "").trim() !== "", null, { timeout: 10_000 });
  await page.locator(control("clip")).click();
  await stayed("Record clip");
  t.ok("Record clip: the tour records, in the same document");

  // Your practice: its panel is under the tour.
  await open("#tour/basics/1");
  await page.waitForSelector("section.practice[data-practice]", { state: "attached", timeout: 10_000 });
  await stayed("Your practice");
  t.ok("Your practice: its panel is there under the tour");

  // q: the QR code.
  await open("#tour/basics/1");
  await page.keyboard.press("q");
  await page.waitForFunction(() => document.body.classList.contains("qr-open"), null, { timeout: 10_000 });
  await stayed("q");
  t.ok("q: the QR code opens in the same document");

  // A walk-through level that asks, with the claim holder followed
  // (basics/3 has both layers on: a claim holder to follow).
  await open("#tour/basics/3");
  await page.locator(control("follow")).selectOption("holder");
  await page.locator("[data-walk-level]").selectOption("faded");
  if (await page.locator(control("predict-show")).isVisible()) await page.locator(control("predict-show")).click();
  else if ((await page.locator(`${control("play")}:visible`).first().getAttribute("aria-pressed")) === "false") await page.locator(`${control("play")}:visible`).first().click();
  await page.waitForFunction(() => document.querySelector("[data-walk-question]")?.hasAttribute("data-asking"), null, { timeout: 30_000 });
  if ((await page.locator(control("follow")).inputValue()) !== "holder") throw new Error(`the follow picker says ${await page.locator(control("follow")).inputValue()}`);
  await stayed("a faded walk-through");
  t.ok("the faded walk-through follows the holder and asks, in the same document");

  t.noProblems("the builds");
});
