// Issue 40, defect 8: the kit's curveballs in the candidate's A/B view.
// 1. Thrown after both runs have ended, a curveball bites: both runs
//    restart with it at an earlier moment (as the single-run view does; it
//    was refused), the link carries it (`throw=`), and the candidate stays
//    in the A/B view.
// 2. One the view must refuse (the claim holder dies, where side A holds
//    no claim) is refused with its reason, and "Make it bite" keeps the
//    candidate in an A/B view with it thrown (it once opened the sandbox).
// No console errors.
import { pairKit } from "./lib/kit.mjs";
import { spec } from "./lib/harness.mjs";

const query = (page) => new URLSearchParams(new URL(page.url()).search);
const status = (kit) =>
  kit.waitForFunction(
    () => {
      const s = document.querySelector("[data-kit-status]");
      return s?.hasAttribute("data-refused") || s?.textContent.startsWith("Thrown") ? s.textContent.trim() : null;
    },
    null,
    { timeout: 90_000 },
  ).then((h) => h.jsonValue());

await spec("kit-ab", async (t) => {
  const { page } = t;
  await t.open("cmp=layered");
  await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]', { timeout: 30_000 });
  await page.click('[data-control="compare-end"]');
  await page.waitForFunction(() => document.querySelector('[data-control="compare-play"]')?.getAttribute("aria-pressed") === "false" && !/so far/.test(document.querySelector("[data-verdict]")?.textContent ?? "so far"), null, { timeout: 90_000 });
  const { kit } = await pairKit(t);
  await kit.locator('[data-curveball="redis"]').click();
  const said = await status(kit);
  if (!said.startsWith("Thrown")) throw new Error(`after both runs ended, the A/B view refuses the curveball: ${said}`);
  await page.waitForFunction(() => /(^|&)throw=redis(%40|@)\d+/.test(location.search.slice(1)), null, { timeout: 10_000 });
  const q = query(page);
  if (q.get("cmp") !== "layered") throw new Error(`the candidate left the A/B view: ?${q}`);
  t.ok(`after both runs ended the curveball bites: "${said.slice(0, 120)}…", ?${q}`);

  await kit.locator('[data-curveball="holder"]').click();
  const refused = await status(kit);
  const why = await kit.locator("[data-kit-status]").getAttribute("data-refused");
  if (why !== "holder") throw new Error(`the holder's curveball in layered (no claim on side A): ${refused}`);
  await kit.locator("[data-kit-status] [data-fix]").click();
  await page.waitForFunction(() => /(^|&)throw=holder(%40|@)\d+/.test(location.search.slice(1)), null, { timeout: 60_000 }).catch(async () => {
    throw new Error(`"Make it bite" opened ?${query(page)} in the candidate's window, not an A/B view with the holder thrown`);
  });
  const fixed = query(page);
  if (!fixed.get("cmp")) throw new Error(`"Make it bite" took the candidate out of the A/B view: ?${fixed}`);
  await page.waitForSelector(".ab-side canvas", { timeout: 30_000 });
  t.ok(`refused in layered ("${refused.slice(0, 80)}…"); "Make it bite" keeps the A/B view: ?${fixed}`);
  t.noProblems("the A/B view's curveballs");
});
