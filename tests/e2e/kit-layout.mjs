// Issue 40, defect 7: the kit's page at 1280 x 800. The curveballs begin
// on the first screen (they once began 1,975 px down a 2,818 px page, under
// the question's levels), and each button of the question picker carries
// the question's title beside its number (it was bare numbers 1 to 15),
// every title its own. No console errors.
import path from "node:path";
import { spec, shots, baseUrl } from "./lib/harness.mjs";

await spec("kit-layout", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await page.locator("[data-kit]").waitFor({ timeout: 30_000 });
  const b = await page.evaluate(() => {
    const c = document.querySelector(".kit-curveballs").getBoundingClientRect();
    const first = document.querySelector(".kit-curveballs [data-curveball]").getBoundingClientRect();
    return { top: c.top + scrollY, first: first.bottom + scrollY, page: document.documentElement.scrollHeight, picks: [...document.querySelectorAll(".kit-pick")].map((p) => p.textContent.trim()) };
  });
  if (b.first > 800) throw new Error(`the curveballs begin ${Math.round(b.top)} px down a ${b.page} px page, their first button ends at ${Math.round(b.first)} px: off the first screen`);
  t.ok(`the curveballs begin ${Math.round(b.top)} px down the kit's ${b.page} px page, on the first screen`);
  if (b.picks.length !== 16) throw new Error(`${b.picks.length} picker buttons`);
  const bare = b.picks.filter((p) => !/[A-Za-z]{3}/.test(p.replace(/✓/g, "")));
  if (bare.length) throw new Error(`picker buttons without a title: ${JSON.stringify(bare)}`);
  if (new Set(b.picks).size !== b.picks.length) throw new Error(`two picker buttons read alike: ${JSON.stringify(b.picks)}`);
  await page.screenshot({ path: path.join(shots, "kit-layout-1280x800.png") });
  t.ok(`the picker: ${b.picks.slice(0, 4).join(" | ")} | …`);
  t.noProblems("the kit's page");
});
