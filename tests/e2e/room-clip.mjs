// The clip export: "Record clip" records the fleet as it plays with
// MediaRecorder on a canvas stream, shows the recorded length while it
// records, and Stop offers a .webm download whose size it states. The clip
// is a WebM: more than zero bytes, starting with the EBML magic 1A 45 DF A3
// (read in the page, through the blob URL).

import { spec } from "./lib/harness.mjs";

await spec("room-clip", async (t) => {
  const { page } = t;
  // The page's CSP allows no fetch of a blob: URL (connect-src 'self'), so
  // the test keeps each Blob the page makes a URL of, and reads that.
  await page.addInitScript(() => {
    const make = URL.createObjectURL;
    window.__blobs = new Map();
    URL.createObjectURL = (b) => {
      const url = make.call(URL, b);
      window.__blobs.set(url, b);
      return url;
    };
  });
  await t.open("preset=jitter&c=inner&i=6&t=30&seed=2");
  const supported = await page.evaluate(() => typeof MediaRecorder !== "undefined" && MediaRecorder.isTypeSupported("video/webm"));
  if (!supported) throw new Error("this Chromium cannot record video/webm");
  const clip = page.locator("[data-clip]");
  const record = clip.locator('[data-control="clip"]');
  // Behind More while the tour runs; the sandbox shows it.
  if (!(await record.isVisible())) await page.locator('[data-control="more-controls"]').click();
  await record.waitFor({ state: "visible", timeout: 10_000 });
  const play = page.locator('[data-control="play"]');
  if ((await play.getAttribute("aria-pressed")) !== "true") await play.click();
  await record.click();
  if ((await record.getAttribute("aria-pressed")) !== "true") throw new Error("Record did not start");
  const length = clip.locator("[data-clip-length]");
  // The length shown grows while it records (whole tenths of a second).
  await page.waitForFunction(() => {
    const m = /([\d.]+) s recorded/.exec(document.querySelector("[data-clip-length]")?.textContent ?? "");
    return m && Number(m[1]) >= 1.5;
  }, null, { timeout: 30_000 });
  const shown = (await length.textContent()).trim();
  // The band above the fleet: what it shows, the clock, the proof's number
  // (the jitter lesson's proof, the origin's peak), as the page shows them.
  const caption = (await length.getAttribute("data-clip-caption")) ?? "";
  if (!/ · t = [\d.]+ ms · [^:]+: \d/.test(caption)) throw new Error(`the clip's caption reads ${JSON.stringify(caption)}`);
  t.ok(`while recording the clip's length shows: ${shown}; its caption: "${caption}"`);
  await t.shot("clip-recording-1280x800.png");
  await record.click();
  const link = clip.locator("[data-clip-download]");
  await link.waitFor({ state: "visible", timeout: 15_000 });
  const href = await link.getAttribute("href");
  const name = await link.getAttribute("download");
  if (!href.startsWith("blob:")) throw new Error(`the download is not a blob URL: ${href}`);
  if (!name.endsWith(".webm")) throw new Error(`the download's name: ${name}`);
  const said = (await link.textContent()).trim();
  const head = await page.evaluate(async (url) => {
    const b = window.__blobs.get(url);
    if (!b) return { size: -1, type: "", magic: "(no blob behind the link)" };
    const bytes = new Uint8Array(await b.slice(0, 4).arrayBuffer());
    return { size: b.size, type: b.type, magic: Array.from(bytes, (x) => x.toString(16).padStart(2, "0")).join(" ") };
  }, href);
  if (!(head.size > 0)) throw new Error(`the clip is ${head.size} bytes`);
  if (head.magic !== "1a 45 df a3") throw new Error(`the clip starts with ${head.magic}, not WebM's EBML header`);
  if (head.type !== "video/webm") throw new Error(`the clip's type is ${head.type}`);
  const kb = head.size < 1024 ? `${head.size} B` : `${Math.round(head.size / 1024)} KB`;
  if (!said.includes(kb)) throw new Error(`the link says ${JSON.stringify(said)}, the clip is ${head.size} bytes (${kb})`);
  if (Number(await link.getAttribute("data-bytes")) !== head.size) throw new Error("data-bytes is not the clip's size");
  const after = (await length.textContent()).trim();
  if (!/^\d+\.\d s recorded$/.test(after)) throw new Error(`after Stop the length reads ${JSON.stringify(after)}`);
  t.ok(`Stop offers ${name}: ${said}, a WebM of ${head.size} bytes (${head.magic}), ${after}`);
  await t.shot("clip-done-1280x800.png");
  await page.setViewportSize({ width: 390, height: 844 });
  await clip.scrollIntoViewIfNeeded();
  await t.shot("clip-done-390x844.png");
  if (!(await link.isVisible())) throw new Error("on a phone the download is not visible");
  // In presenter mode the clip is for slides: at least 1280 px wide.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.keyboard.press("p");
  await page.waitForFunction(() => document.body.classList.contains("presenter"));
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelector('[data-control="clip"]')?.getAttribute("aria-pressed") === "true", null, { timeout: 10_000 });
  const size = await length.getAttribute("data-clip-size");
  await page.keyboard.press("r");
  const [cw] = (size ?? "0x0").split("x").map(Number);
  if (!(cw >= 1280)) throw new Error(`in presenter mode the clip is ${size}`);
  await page.keyboard.press("p");
  t.ok(`in presenter mode the clip is ${size}`);
  // In the A/B view the clip records both sides' fleets side by side,
  // each under its letter, and the band gives both sides' numbers.
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("cmp=layered");
  await page.locator(".ab-side canvas").first().waitFor({ state: "visible", timeout: 30_000 });
  // The A/B view's header has no transport: its key records.
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelector("[data-clip-length]")?.dataset.clipCaption?.includes(" · B "), null, { timeout: 10_000 });
  const abCaption = await length.getAttribute("data-clip-caption");
  const abSize = await length.getAttribute("data-clip-size");
  await page.keyboard.press("r");
  const widths = await page.locator(".ab-side .stage-canvas canvas:not(.overlay)").evaluateAll((cs) => cs.map((c) => c.width));
  const [abw] = (abSize ?? "0x0").split("x").map(Number);
  if (widths.length !== 2 || abw < widths[0] + widths[1]) {
    throw new Error(`the A/B clip is ${abSize}, its sides' canvases ${widths.join(" and ")} px wide`);
  }
  if (!/ · t = [\d.]+ ms · [^:]+: A \d+ · B \d+$/.test(abCaption ?? "")) throw new Error(`the A/B clip's caption reads ${JSON.stringify(abCaption)}`);
  t.ok(`the A/B view's clip records both sides (${abSize}, sides ${widths.join(" + ")} px): "${abCaption}"`);
  t.noProblems("the clip export");
});
