// The two builds (src/more.rs): a first visit loads the tour build and
// nothing of the full one; every address gets the build the page's own rule
// (`more::tour_only`) gives it, fetched once, with no reload to correct the
// loader's choice; and every way out of the tour build reaches the full one
// where the tour build was: the sandbox keeps the scenario and the moment,
// and "Add this view", Record clip, Your practice, `q` and a walk-through
// level that asks are done there as if pressed there.
import { control, spec } from "./lib/harness.mjs";

const wasmOf = (url) => url.match(/(stampede-(?:tour|lab))-[0-9a-f]{16}_bg\.wasm$/)?.[1];

// The same table as src/more.rs's host tests: [address, build].
const ADDRESSES = [
  ["", "tour"],
  ["#tour/basics/2", "tour"],
  ["?preset=naive&seed=3#tour/basics/2", "tour"],
  ["?present=1#tour/deeper", "tour"],
  ["?preset=naive", "full"],
  ["#questions", "full"],
  ["?drill=#tour/basics/1", "full"],
  ["?kit=1#tour/basics/1", "full"],
  ["?cmp=layering#tour/solid/2", "full"],
  ["?seed=1", "full"],
];

await spec("builds", async (t) => {
  const { page } = t;
  const fetched = [];
  page.on("request", (r) => {
    const w = wasmOf(r.url());
    if (w) fetched.push(w);
  });
  let loads = 0;
  page.on("load", () => (loads += 1));
  const base = process.env.E2E_URL;

  for (const [address, want] of ADDRESSES) {
    // A fresh tab each time: the full build, once needed, stays for the tab.
    await page.evaluate(() => sessionStorage.clear()).catch(() => {});
    await page.goto("about:blank");
    fetched.length = 0;
    loads = 0;
    await page.goto(base + address, { waitUntil: "load" });
    // The kit's window draws no fleet: it is up once it says so.
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame || document.body.classList.contains("kit-window"), null, { timeout: 30_000 });
    await page.waitForTimeout(300);
    const build = await page.evaluate(() => document.documentElement.dataset.build);
    const wantWasm = want === "tour" ? "stampede-tour" : "stampede-lab";
    if (build !== want) throw new Error(`${address || "(a first visit)"}: the ${build} build, expected the ${want} build`);
    if (fetched.join() !== wantWasm) throw new Error(`${address || "(a first visit)"}: fetched ${fetched.join(", ") || "no wasm"}, expected ${wantWasm} alone`);
    if (loads !== 1) throw new Error(`${address || "(a first visit)"}: ${loads} page loads (the tour build corrected the loader)`);
    t.ok(`${address || "a first visit"}: the ${want} build, its wasm fetched once, no reload`);
  }

  // Out of the tour: the sandbox, at the moment the tour build was.
  // A fresh tab's state: the full build forgotten (the page is ours now).
  const fresh = async (address = "") => {
    await page.evaluate(() => sessionStorage.clear());
    await page.goto("about:blank");
    await page.goto(base + address, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    if ((await page.evaluate(() => document.documentElement.dataset.build)) !== "tour") throw new Error(`${address}: not the tour build`);
  };
  const fullUp = async (why) => {
    await page.waitForFunction(() => document.documentElement.dataset.build === "full" && document.documentElement.dataset.firstFrame, null, {
      timeout: 30_000,
    });
    t.ok(`${why}: the full build is up`);
  };
  await fresh("#tour/basics/2");
  // The tour build's keys: no list keys, no clock steps of a sandbox it
  // does not have; the full build's list says both.
  const keysSaid = async () => {
    await page.keyboard.press("?");
    await page.locator(".shortcuts").waitFor({ state: "visible" });
    const said = await page.locator(".shortcuts dl").textContent();
    await page.keyboard.press("Escape");
    return said;
  };
  const tourKeys = await keysSaid();
  if (/a list open|A\/B view/.test(tourKeys)) throw new Error(`the tour build's keys list the full build's: ${tourKeys}`);
  if (!/the next tour step/.test(tourKeys)) throw new Error(`the tour build's keys: ${tourKeys}`);
  if ((tourKeys.match(/loads the rest of the lab/g) ?? []).length !== 2) throw new Error(`the tour build's keys do not say which load the rest (1 to 5, q): ${tourKeys}`);
  t.ok("the tour build's ? lists its own keys (no list's, no sandbox clock's; 1 to 5 and q say they load the rest)");
  await page.locator(control("play")).first().click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > 5, null, { timeout: 30_000 });
  await page.locator(control("play")).first().click();
  // The moment in whole milliseconds, as the address keeps it once paused
  // (the clock shows tenths, rounded: 8.96 ms reads 9.0).
  const moment = async () => {
    await page.waitForFunction(() => new URL(location.href).searchParams.has("at"));
    return Number(new URL(page.url()).searchParams.get("at"));
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
  await fullUp("Open the sandbox");
  const url = new URL(page.url());
  if (url.hash) throw new Error(`the sandbox opened at ${url.hash}`);
  if (knobs(page.url()) !== scenario) throw new Error(`the sandbox has ${knobs(page.url())}, the tour had ${scenario}`);
  try {
    await page.waitForFunction((b) => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) === b, before, { timeout: 30_000 });
  } catch {
    throw new Error(`the sandbox is at t = ${await t.text("now_ms")} ms (${page.url()}), the tour was at ${before} ms`);
  }
  if (!(await page.locator(control("instances")).count())) throw new Error("the sandbox has no knobs");
  if (!/a list open/.test(await keysSaid())) throw new Error("the full build's ? does not list a list's keys");
  t.ok(`the sandbox keeps the tour's scenario (${scenario}) and its moment (t = ${before} ms), with its knobs`);
  // The tab keeps the full build, tour included.
  await page.goto(base + "#tour/basics/1", { waitUntil: "load" });
  await fullUp("a tour step in the same tab");

  // Add this view, mid-step: the tour step at its moment, added in the
  // full build, which opens there (its prediction behind it).
  await fresh("#tour/basics/3");
  if (await page.locator(control("predict-show")).isVisible()) await page.locator(control("predict-show")).click();
  await page.waitForFunction(() => Number(document.querySelector('[data-metric="now_ms"]')?.textContent) > 5, null, { timeout: 30_000 });
  await page.keyboard.press(" ");
  await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false");
  const paused = await moment();
  const stepSaid = () => page.evaluate(() => [...document.querySelectorAll("section.tour .tour-text")].map((e) => e.textContent).join(" | "));
  const tourSaid = await stepSaid();
  await page.locator(control("more-controls")).click().catch(() => {});
  await page.locator(`${control("playlist-add")}[data-more]`).click();
  await fullUp("Add this view");
  await page.waitForFunction(() => document.querySelectorAll("[data-playlist] [data-playlist-item]").length === 1, null, { timeout: 10_000 });
  const item = (await page.locator("[data-playlist] [data-playlist-item]").first().textContent()).trim();
  if (!item.includes(`at ${paused} ms`)) throw new Error(`the list's item reads ${JSON.stringify(item)}, the tour build was paused at ${paused} ms`);
  if (Number(await t.text("now_ms")) !== paused) throw new Error(`the full build opened at ${await t.text("now_ms")} ms, not ${paused}`);
  // Its question is behind it, as after "Just show me": not asked again.
  if (await page.locator(control("predict-show")).isVisible()) throw new Error("the step's prediction is asked again at its moment");
  if ((await stepSaid()) !== tourSaid) throw new Error(`the full build's step says ${JSON.stringify(await stepSaid())}, the tour build's said ${JSON.stringify(tourSaid)}`);
  t.ok(`Add this view at ${paused} ms: the full build opens the step there, paused, and the list holds it`);

  // Record clip: recording in the full build.
  await fresh("#tour/basics/1");
  await page.locator(control("more-controls")).click().catch(() => {});
  await page.locator(`${control("clip")}[data-more]`).click();
  await fullUp("Record clip");
  await page.waitForFunction(() => (document.querySelector("[data-clip-length]")?.textContent ?? "").trim() !== "", null, { timeout: 10_000 });
  await page.locator(`${control("clip")}`).click();
  t.ok("Record clip: the full build records");

  // Your practice: the full build's panel, scrolled to.
  await fresh("#tour/basics/1");
  await page.locator(`${control("practice-open")}[data-more]`).click();
  await fullUp("Open your practice");
  await page.waitForSelector("section.practice[data-practice]", { timeout: 10_000 });
  t.ok("Your practice: the full build's panel");

  // q: the QR code, open in the full build.
  await fresh("#tour/basics/1");
  await page.keyboard.press("q");
  await fullUp("q");
  await page.waitForFunction(() => document.body.classList.contains("qr-open"), null, { timeout: 10_000 });
  t.ok("q: the QR code is open in the full build");

  // A walk-through level that asks, with a thread followed: the full build
  // follows the same thread and asks.
  // (basics/4 has both layers on: a claim holder to follow.)
  await fresh("#tour/basics/4");
  await page.locator(control("follow")).selectOption("holder");
  await page.locator("[data-walk-level]").selectOption("faded");
  await fullUp("a faded walk-through");
  if ((await page.locator(control("follow")).inputValue()) !== "holder") throw new Error(`the follow picker says ${await page.locator(control("follow")).inputValue()}`);
  // Past the step's prediction, the run plays to the thread's first decision and asks.
  if (await page.locator(control("predict-show")).isVisible()) await page.locator(control("predict-show")).click();
  else if ((await page.locator(control("play")).first().getAttribute("aria-pressed")) === "false") await page.locator(control("play")).first().click();
  await page.waitForFunction(() => document.querySelector("[data-walk-question]")?.hasAttribute("data-asking"), null, { timeout: 30_000 });
  t.ok("the faded walk-through: the full build follows the holder (its picker says so) and asks");

  t.noProblems("the builds");
});
