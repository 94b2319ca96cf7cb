// The link's QR code: in presenter mode a code sits in the corner, it is
// drawn from the page's own link, and it changes when the link does; the
// printed summary carries one too. (Decoding is qrcodegen's business; here
// the code's text is the data-qr attribute the page drew it from.)

import { spec } from "./lib/harness.mjs";

await spec("qr", async (t) => {
  const { page } = t;
  await t.open("preset=burst&seed=3");
  await page.keyboard.press("p");
  await page.waitForFunction(() => document.body.classList.contains("presenter"));
  const corner = page.locator(".qr-corner");
  await corner.locator("svg path").waitFor({ state: "visible", timeout: 10_000 });
  const box = await corner.boundingBox();
  if (!box || box.width < 100) throw new Error(`the corner code is too small: ${JSON.stringify(box)}`);
  // The page writes its link a moment after it opens; the code follows.
  try {
    await page.waitForFunction(() => document.querySelector(".qr-corner")?.dataset.qr === location.href, null, { timeout: 5_000 });
  } catch {
    throw new Error(`the code is of ${await corner.getAttribute("data-qr")}, the page is at ${page.url()}`);
  }
  const d1 = await corner.locator("path").getAttribute("d");
  await page.setViewportSize({ width: 1280, height: 720 });
  await t.shot("qr-presenter-1280x720.png");
  await page.setViewportSize({ width: 1280, height: 800 });
  t.ok(`presenter mode shows the link's QR code (${Math.round(box.width)} px)`);
  await page.keyboard.press("p");
  await t.setNumber("seed", 9);
  await page.waitForFunction(() => location.search.includes("seed=9"));
  await page.waitForFunction(() => document.querySelector(".qr-corner")?.dataset.qr === location.href, null, { timeout: 5_000 });
  const d2 = await corner.locator("path").getAttribute("d");
  if (d1 === d2) throw new Error("a new link drew the same code");
  t.ok("a new link, a new code");
  await page.emulateMedia({ media: "print" });
  const printed = page.locator(".qr-print [data-qr] svg");
  if (!(await printed.isVisible())) throw new Error("the printed summary has no QR code");
  if ((await page.locator(".qr-print [data-qr]").getAttribute("data-qr")) !== page.url()) throw new Error("the printed code is of another link");
  t.ok("the printed summary carries the link's code");
  await page.emulateMedia({ media: "screen" });
  t.noProblems("the QR codes");
});
