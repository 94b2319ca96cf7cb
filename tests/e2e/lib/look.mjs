// Not a spec: screenshots of one address at the four sizes, for a person to
// look at (LOOK_QUERY, LOOK_OUT). Run: tests/e2e/run.sh tests/e2e/lib/look.mjs
import { launch } from "./harness.mjs";
const q = process.env.LOOK_QUERY ?? "i=3&t=4&seed=1#tour/basics/3";
const out = process.env.LOOK_OUT ?? "/tmp";
const { context } = await launch();
const page = context.pages()[0] ?? (await context.newPage());
for (const [w, h] of [[1280, 800], [390, 844], [1280, 720], [1920, 1080]]) {
  await page.setViewportSize({ width: w, height: h });
  await page.goto(`${process.env.E2E_URL}?${q}`, { waitUntil: "load" });
  await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  await page.waitForTimeout(Number(process.env.LOOK_WAIT ?? 1500));
  if (process.env.LOOK_CLICK) {
    for (const sel of process.env.LOOK_CLICK.split("|")) {
      await page.locator(sel).first().click().catch((e) => console.log(`click ${sel}: ${e.message.split("\n")[0]}`));
      await page.waitForTimeout(600);
    }
  }
  await page.screenshot({ path: `${out}/look-${w}x${h}.png` });
  if (process.env.LOOK_FULL) await page.screenshot({ path: `${out}/look-${w}x${h}-full.png`, fullPage: true });
}
await context.close();
