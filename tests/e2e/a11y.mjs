// Accessibility: axe-core (from npm, in .tools/, injected by the test and
// never shipped) finds no serious or critical violation on the tour, the
// sandbox, presenter mode, the A/B view and the reference, in light and
// dark; the whole page works from the keyboard with a visible focus ring;
// the counters announce through a polite live region.
import { readFileSync } from "node:fs";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const axeSource = readFileSync(path.join(root, ".tools", "node_modules", "axe-core", "axe.min.js"), "utf8");

async function audit(t, where) {
  const { page } = t;
  // Through the devtools protocol, which the page's policy does not govern.
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () =>
    // eslint-disable-next-line no-undef
    axe.run(document, { resultTypes: ["violations"], runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"] } }),
  );
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length) {
    const lines = bad.map(
      (v) => `${v.impact} ${v.id}: ${v.help}\n      ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")} — ${n.failureSummary?.split("\n")[1] ?? ""}`).join("\n      ")}`,
    );
    throw new Error(`${where}: axe finds ${bad.length} serious or critical:\n  ${lines.join("\n  ")}`);
  }
  t.ok(`${where}: no serious or critical axe violations (${result.violations.length} minor)`);
}

await spec("a11y", async (t) => {
  const { page } = t;
  // The audit can fail: a planted nameless button is caught.
  await t.open();
  await page.evaluate(() => document.body.append(Object.assign(document.createElement("button"), { id: "planted" })));
  let caught = false;
  try {
    await audit(t, "a planted nameless button");
  } catch (e) {
    caught = /button-name/.test(e.message);
  }
  if (!caught) throw new Error("axe did not catch a nameless button");
  t.ok("the audit catches a planted violation");
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(process.env.E2E_URL, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await audit(t, `the tour (${scheme})`);
    await t.open("preset=burst");
    await page.keyboard.press("End");
    await page.waitForTimeout(500);
    for (const d of await page.locator("details").all()) await d.evaluate((e) => (e.open = true));
    await audit(t, `the sandbox and the reference, every answer open (${scheme})`);
    await page.keyboard.press("p");
    await audit(t, `presenter mode (${scheme})`);
    await page.keyboard.press("p");
    await page.goto(`${process.env.E2E_URL}?cmp=claim-order`, { waitUntil: "load" });
    await page.waitForSelector('[data-side="b"] [data-metric="recomputes"]');
    await page.locator(control("compare-end")).click();
    await page.waitForTimeout(500);
    await audit(t, `the A/B view (${scheme})`);
  }

  // Keyboard alone: Tab reaches the controls with a visible focus ring.
  await page.emulateMedia({ colorScheme: "light" });
  await t.open();
  const seen = new Set();
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    const f = await page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return null;
      const s = getComputedStyle(e);
      const ring = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2;
      return { control: e.dataset.control ?? e.tagName, ring };
    });
    if (!f) continue;
    if (!f.ring) throw new Error(`Tab stop ${i + 1} (${f.control}) has no visible focus ring`);
    seen.add(f.control);
  }
  for (const c of ["play", "step", "timeline", "compare", "tour"]) {
    if (!seen.has(c)) throw new Error(`Tab never reaches ${c}: ${[...seen].join(", ")}`);
  }
  t.ok(`Tab walks ${seen.size} controls, each with a visible focus ring`);

  // The number that matters speaks through one polite live region, at a
  // pace a screen reader can follow: when the run settles, or every few
  // seconds while it moves, never every frame.
  await t.open("preset=burst");
  await page.evaluate(() => {
    window.__said = [];
    const el = document.querySelector("[data-announce]");
    new MutationObserver(() => window.__said.push([performance.now(), el.textContent])).observe(el, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  const t0 = Date.now();
  await t.untilEnd();
  await page.waitForTimeout(300);
  const seconds = (Date.now() - t0) / 1000;
  const said = await page.evaluate(() => window.__said);
  const last = said.at(-1)?.[1];
  if (!said.length || last !== "recomputes: 1") throw new Error(`the live region ended on ${JSON.stringify(last)}`);
  if (said.length > seconds / 4 + 3) throw new Error(`${said.length} announcements in ${seconds.toFixed(1)} s`);
  const live = await page.locator('[aria-live="polite"]').count();
  if (live !== 1) throw new Error(`${live} polite live regions, want one`);
  t.ok(`one polite live region: ${said.length} announcement(s) over a ${seconds.toFixed(1)} s run, ending "${last}"`);
  t.noProblems("at the end");
});
