// Every lesson points at its proof: for each preset, and each pitfall on the
// preset that demonstrates it, the counter that proves the lesson is on
// screen (not inside a closed <details>), marked data-proof, shows damage
// where the lesson is damage, and agrees with stampede-sim for the same link.
// Screenshots of each at the end of its run, at desktop size.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { spec, root } from "./lib/harness.mjs";

// make e2e builds it first (debug: what cargo test built already).
const cli = path.join(root, "target", "debug", "stampede-sim");
if (!existsSync(cli)) throw new Error(`${cli} is missing: run cargo build -p stampede-catalogue first`);

const simulate = (query) =>
  JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));

const presets = JSON.parse(
  execFileSync(cli, ["--list-presets"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => JSON.stringify(l.split(/\s+/)[0]))
    .join(",")
    .replace(/^/, "[")
    .replace(/$/, "]"),
);
const pitfalls = [
  ["burst", "mutable-result"],
  ["failure", "remember-failure"],
  ["hang", "no-deadline"],
  ["singleflight", "key-mismatch"],
];

await spec("proof", async (t) => {
  const { page } = t;
  const cases = [
    ...presets.map((p) => [`preset=${p}`, p]),
    ...pitfalls.map(([p, f]) => [`preset=${p}&pf=${f}`, `${p} + ${f}`]),
  ];
  for (const [query, name] of cases) {
    await t.open(`${query}&speed=100`);
    await t.untilEnd(120_000);
    const proof = page.locator("[data-proof]");
    if ((await proof.count()) !== 1) throw new Error(`${name}: ${await proof.count()} data-proof elements`);
    if (!(await proof.isVisible())) throw new Error(`${name}: the proof is not visible`);
    // On screen as the page opens at 1280 x 800: no scrolling to find it.
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = await proof.boundingBox();
    if (!box || box.y < 0 || box.y + box.height > 800) {
      throw new Error(`${name}: the proof is off screen at 1280x800 (${JSON.stringify(box)})`);
    }
    const inClosed = await proof.evaluate((el) => Boolean(el.closest("details:not([open])")));
    if (inClosed) throw new Error(`${name}: the proof sits in a closed <details>`);
    const m = await proof.getAttribute("data-metric");
    const shown = (await proof.textContent()).trim();
    const damage = (await proof.getAttribute("data-damage")) === "1";
    if (damage && !(Number(shown) > 0)) throw new Error(`${name}: the lesson is damage but ${m} shows ${shown}`);
    const link = new URL(page.url()).search.slice(1);
    const want = simulate(link)[m];
    if (Number(shown) !== Number(want)) {
      throw new Error(`${name}: the page proves ${m} = ${shown}, stampede-sim --url '${link}' says ${want}`);
    }
    const note = ((await page.locator(".proof-note").textContent()) ?? "").trim();
    if (note.length < 20) throw new Error(`${name}: no line explains the proof`);
    await t.shot(`proof-${name.replace(/[^a-z0-9]+/g, "-")}.png`);
    t.noProblems(`while proving ${name}`);
    t.ok(`${name}: ${m} = ${shown}${damage ? " (damage)" : ""}, as stampede-sim says; "${note.slice(0, 60)}…"`);
  }

  // A link printed by the command line opens the same run in the page.
  const printed = execFileSync(cli, ["--preset", "short-ttl", "--instances", "4", "--seed", "7", "--print-url"], {
    encoding: "utf8",
  }).trim();
  await t.open(`${printed.slice(1)}&speed=100`);
  await t.untilEnd(120_000);
  const want = simulate(printed);
  for (const m of ["requests", "recomputes", "overlapping_recomputes", "claim_attempts", "timeouts"]) {
    const shown = (await page.locator(`[data-metric="${m}"]`).first().textContent()).trim();
    if (Number(shown) !== Number(want[m])) throw new Error(`${printed}: the page shows ${m} = ${shown}, the CLI ${want[m]}`);
  }
  t.ok(`stampede-sim --print-url (${printed}) opens the same run in the page`);

  // The arithmetic scores outcomes: on the card's run the layered row is
  // best; when every request times out (a hung origin) no row is.
  const bestRows = () => page.$$eval('tr[data-best="1"]', (rs) => rs.map((r) => r.dataset.row));
  await t.open("speed=100");
  await t.untilEnd();
  await page.waitForFunction(() => document.querySelectorAll('tr[data-best="1"]').length === 1);
  const best = await bestRows();
  if (best.join() !== "measured_both") throw new Error(`the card's run marks ${best} best`);
  t.ok("the card's run: singleflight + claim is the best row");
  await t.open("preset=hang&speed=100");
  await t.untilEnd();
  const got = (await page.locator('[data-outcome="measured_both"]').textContent()).trim();
  if (!got.includes("8000 failed")) throw new Error(`the hung origin's row says "${got}"`);
  if ((await bestRows()).length) throw new Error(`a hung origin marks ${await bestRows()} best`);
  t.ok(`a hung origin: no row is best ("+ claim" got: ${got})`);
  // A cold cache with skewed keys: no defence degrades most callers, so it
  // is not the best however few its recomputes, and it says why.
  await t.open("preset=cold-skew&speed=100");
  await t.untilEnd();
  await page.waitForFunction(() => document.querySelectorAll('tr[data-best="1"]').length === 1);
  const coldBest = await bestRows();
  if (coldBest.join() === "measured_none") throw new Error("cold-skew marks no defence best");
  const none = (await page.locator('[data-outcome="measured_none"]').textContent()).trim();
  if (!/ · behind the best, which answered \d+ of \d+ with a value$/.test(none)) throw new Error(`cold-skew's no-defence row says "${none}"`);
  t.ok(`cold-skew: ${coldBest} is best; no defence: "${none}"`);

  // Each preset at its end, at the three sizes a room sees it.
  for (const [w, h, tag] of [[1280, 800, "desktop"], [1920, 1080, "projector"], [390, 844, "phone"]]) {
    await page.setViewportSize({ width: w, height: h });
    for (const p of presets) {
      await t.open(`preset=${p}&speed=100`);
      await t.untilEnd(120_000);
      await t.shot(`${tag}-${p}.png`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  t.noProblems("while scoring the rows and taking screenshots");
  t.ok(`screenshots of all ${presets.length} presets at 1280x800, 1920x1080 and 390x844`);
});
