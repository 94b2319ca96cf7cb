// The link's QR code: `q` opens it large over the page (in presenter mode
// too) and closes it again, Esc closes it; it is drawn from the page's own
// link and changes when the link does; the printed summary carries one.
// (Decoding is qrcodegen's business; here the code's text is the data-qr
// attribute the page drew it from.)

import { spec } from "./lib/harness.mjs";

await spec("qr", async (t) => {
  const { page } = t;
  await t.open("preset=burst&seed=3");
  const overlay = page.locator("[data-qr-overlay]");
  if (await overlay.isVisible()) throw new Error("the code shows before it is asked for");
  await page.keyboard.press("p");
  await page.waitForFunction(() => document.body.classList.contains("presenter"));
  await page.keyboard.press("q");
  const code = overlay.locator("[data-qr]");
  await code.locator("svg path").waitFor({ state: "visible", timeout: 10_000 });
  // The page writes its link a moment after it opens; the code follows.
  try {
    await page.waitForFunction(() => document.querySelector("[data-qr-overlay] [data-qr]")?.dataset.qr === location.href.replace(/([?&])present=1(&|(?=#)|$)/, (m, a, b) => (b === "&" ? a : "")).replace(/\?(?=#|$)/, ""), null, { timeout: 5_000 });
  } catch {
    throw new Error(`the code is of ${await code.getAttribute("data-qr")}, the page is at ${page.url()}`);
  }
  await page.setViewportSize({ width: 1280, height: 720 });
  const box = await code.boundingBox();
  if (!box || box.width < 300) throw new Error(`the code is too small for a room: ${JSON.stringify(box)}`);
  await t.shot("qr-presenter-1280x720.png");
  await page.setViewportSize({ width: 1280, height: 800 });
  const d1 = await code.locator("path").getAttribute("d");
  t.ok(`q in presenter mode shows the link's QR code (${Math.round(box.width)} px at 1280 x 720)`);
  await page.keyboard.press("q");
  if (await overlay.isVisible()) throw new Error("q did not close the code");
  await page.keyboard.press("p");
  await t.setNumber("seed", 9);
  await page.waitForFunction(() => location.search.includes("seed=9"));
  await page.keyboard.press("q");
  await page.waitForFunction(() => document.querySelector("[data-qr-overlay] [data-qr]")?.dataset.qr === location.href.replace(/([?&])present=1(&|(?=#)|$)/, (m, a, b) => (b === "&" ? a : "")).replace(/\?(?=#|$)/, ""), null, { timeout: 5_000 });
  const d2 = await code.locator("path").getAttribute("d");
  if (d1 === d2) throw new Error("a new link drew the same code");
  await page.keyboard.press("Escape");
  if (await overlay.isVisible()) throw new Error("Esc did not close the code");
  t.ok("a new link, a new code; q and Esc close it");
  await page.emulateMedia({ media: "print" });
  const printed = page.locator(".qr-print [data-qr] svg");
  if (!(await printed.isVisible())) throw new Error("the printed summary has no QR code");
  if ((await page.locator(".qr-print [data-qr]").getAttribute("data-qr")) !== page.url()) throw new Error("the printed code is of another link");
  t.ok("the printed summary carries the link's code");
  await page.emulateMedia({ media: "screen" });
  t.noProblems("the QR codes");
});
