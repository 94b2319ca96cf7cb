// Predictions and drills (issue 17): a tour step's number stays hidden
// until the prediction is answered, then is revealed with the run's value;
// every drill's worked solution, applied by the page's own "show solution"
// button, passes on the page with stampede-sim's grade (criterion by
// criterion, for the page's own link too); a locked knob in a link is
// refused with a notice; `?drill=` lists the drills. Screenshots at
// 1280x800 and 390x844.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const sim = (...args) => execFileSync(cli, args, { encoding: "utf8" });
const simJson = (...args) => JSON.parse(sim(...args, "--json"));
const shown = (metric, v) => (metric.endsWith("_ms") ? `${Number.isInteger(v) ? v.toFixed(1) : v} ms` : String(v));
const axeSource = readFileSync(path.join(root, ".tools", "node_modules", "axe-core", "axe.min.js"), "utf8");

// axe-core, as tests/e2e/a11y.mjs runs it: no serious or critical violation.
async function audit(t, where) {
  await t.page.evaluate(axeSource);
  const result = await t.page.evaluate(async () =>
    // eslint-disable-next-line no-undef
    axe.run(document, { resultTypes: ["violations"], runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"] } }),
  );
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length) {
    throw new Error(`${where}: axe finds ${bad.map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3)})`).join(", ")}`);
  }
  t.ok(`${where}: no serious or critical axe violations`);
}

const firstFrame = (page) =>
  page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });

// Presses End until the drill's grade is in (the first press may reach the
// run before it is rebuilt), then reads the page's grade.
async function pageGrade(page, name) {
  const until = Date.now() + 90_000;
  for (;;) {
    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("End");
    const state = await page.locator("[data-grade]").getAttribute("data-grade");
    if (state !== "pending") break;
    if (Date.now() > until) throw new Error(`${name}: no grade after 90 s`);
    await page.waitForTimeout(400);
  }
  return page.evaluate(() => ({
    passed: document.querySelector("[data-grade]").dataset.grade === "passed",
    criteria: [...document.querySelectorAll("[data-criterion]")].map((li) => ({
      name: li.dataset.criterion,
      passed: li.dataset.graded === "true",
      value: Number(li.dataset.value),
      live: li.dataset.passed,
    })),
  }));
}

function sameGrade(name, page, want) {
  if (page.passed !== want.passed) throw new Error(`${name}: page says passed=${page.passed}, CLI ${want.passed}`);
  if (page.criteria.length !== want.criteria.length) throw new Error(`${name}: ${page.criteria.length} criteria, CLI ${want.criteria.length}`);
  want.criteria.forEach((c, i) => {
    const p = page.criteria[i];
    if (p.name !== c.name || p.passed !== c.passed || p.value !== c.value) {
      throw new Error(`${name}: criterion ${JSON.stringify(p)} differs from the CLI's ${JSON.stringify(c)}`);
    }
  });
}

await spec("drills", async (t) => {
  const { page } = t;

  // ---- predictions: hidden until answered, then revealed.
  await page.goto(`${process.env.E2E_URL}#tour/basics/2`, { waitUntil: "load" });
  await firstFrame(page);
  const question = page.locator("[data-predict]");
  await question.waitFor({ state: "visible" });
  await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
  const options = await page.locator("[data-predict-option]").allTextContents();
  if (options.length < 3 || options.length > 4) throw new Error(`${options.length} options: ${options}`);
  const number = page.locator(".tour-number");
  const metric = await number.getAttribute("data-metric");
  const want = shown(metric, simJson("--url", new URL(page.url()).search)[metric]);
  if (!options.includes(want)) throw new Error(`the options ${options} miss the run's ${want}`);
  await page.waitForTimeout(600);
  const before = await number.evaluate((el) => [el.textContent.trim(), el.hasAttribute("data-revealed")]);
  if (before[0] === want || before[1]) throw new Error(`the number shows before the bet: ${before}`);
  const clock = await page.locator(control("timeline")).inputValue();
  if (Number(clock) !== 0) throw new Error(`the step plays before the bet (t = ${clock})`);
  t.ok(`${metric}: the question and ${options.length} options (${options.join(", ")}) show, the number hidden, the run at t = 0`);
  await t.shot("predict-ask-desktop.png");
  await audit(t, "a prediction, asking");
  const wrong = options.findIndex((o) => o !== want);
  await page.locator(`[data-predict-option="${wrong}"]`).click();
  await page.waitForTimeout(300);
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("End");
  await page.waitForFunction(() => document.querySelector(".tour-number[data-revealed]"), null, { timeout: 60_000 });
  const after = (await number.textContent()).trim();
  if (after !== want) throw new Error(`revealed ${after}, stampede-sim says ${want}`);
  const verdict = (await page.locator(".tour-verdict").textContent()).trim();
  if (!verdict.includes(`You said ${options[wrong]}`) || !verdict.includes(want)) throw new Error(`the verdict: ${verdict}`);
  if ((await page.locator('[data-predict-option][data-right="1"]').textContent()).trim() !== want) {
    throw new Error("the right option is not marked");
  }
  t.ok(`picked ${options[wrong]}: revealed ${want} (the CLI's) with "${verdict.slice(0, 70)}…"`);
  await t.shot("predict-revealed-desktop.png");

  // Skipping is remembered: the next visit plays without asking.
  await page.goto(`${process.env.E2E_URL}#tour/basics/3`, { waitUntil: "load" });
  await firstFrame(page);
  await page.locator(control("predict-skip")).click();
  await page.goto(`${process.env.E2E_URL}#tour/basics/1`, { waitUntil: "load" });
  await firstFrame(page);
  await page.waitForTimeout(500);
  if (await question.isVisible()) throw new Error("skip predictions was forgotten");
  t.ok("skip predictions is remembered over a reload");
  await page.locator(control("predict-toggle")).click();
  await question.waitFor({ state: "visible" });
  t.ok("Predict first turns them back on");

  // ---- the list.
  await t.open("drill=");
  const names = sim("--list-drills").trim().split("\n").map((l) => l.split(/\s+/)[0]);
  const listed = await page.locator(".drill-list[open] a").count();
  if (listed !== names.length) throw new Error(`?drill= lists ${listed} drills, the CLI ${names.length}`);
  t.ok(`?drill= opens the list of ${listed} drills`);

  // ---- every drill's solution, graded on the page as by the CLI.
  for (const name of names) {
    await t.open(`drill=${name}`);
    await page.locator(`[data-drill="${name}"]`).waitFor({ state: "visible" });
    const want = simJson("--drill", name, "--solution");
    await page.locator(control("drill-solution")).click();
    await page.waitForTimeout(300);
    const got = await pageGrade(page, name);
    sameGrade(name, got, want);
    if (!got.passed) throw new Error(`${name}: the solution fails`);
    if (!(await page.locator(`[data-drill="${name}"]`).isVisible())) throw new Error(`${name}: the solution left the drill`);
    if (!(await page.locator(".drill-reasoning").isVisible())) throw new Error(`${name}: no reasoning shown`);
    // The page's own link carries the answer: the CLI grades it the same.
    const link = new URL(page.url()).search.slice(1);
    sameGrade(`${name} (${link})`, got, simJson("--drill", name, "--url", link));
    t.ok(`${name}: the solution passes on the page as stampede-sim grades it (${got.criteria.map((c) => `${c.name}: ${c.value}`).join(", ")}); so does ?${link}`);
    if (name === names[0]) {
      for (let i = 0; i < 3; i++) await page.locator(control("drill-hint")).click();
      if ((await page.locator(".drill-hints li").count()) !== 3) throw new Error("the three hints do not show one by one");
      await t.shot("drill-desktop.png");
      await audit(t, "a drill, solved, light");
      await page.emulateMedia({ colorScheme: "dark" });
      await audit(t, "a drill, solved, dark");
      await t.shot("drill-desktop-dark.png");
      await page.emulateMedia({ colorScheme: "light" });
    }
  }

  // ---- a locked knob in a link is refused, with a notice.
  await t.open("drill=jitter&i=3");
  const banner = (await page.locator(".banner").textContent()) ?? "";
  if (!banner.includes("locked in this drill")) throw new Error(`no notice for the locked claim: ${banner}`);
  if (await page.locator(`[data-drill] ${control("lesson-instances")}`).count()) throw new Error("a locked knob is shown");
  const got = await pageGrade(page, "jitter");
  sameGrade("jitter (locked instances)", got, simJson("--drill", "jitter", "--url", "i=3"));
  t.ok(`a locked knob (i=3) is refused: "${banner.slice(0, 80)}…", and the grade is still the CLI's`);

  // Turning an allowed knob stays in the drill, and the link carries it.
  await t.open("drill=claim-order");
  await page.locator(`[data-drill] ${control("lesson-claim")}`).selectOption("inner");
  await page.waitForFunction(() => location.search.includes("c=inner"));
  if (!(await page.locator("[data-drill]").isVisible())) throw new Error("an allowed knob left the drill");
  t.ok(`an allowed knob turned on the page stays in the drill: ${new URL(page.url()).search}`);
  // A digit key's preset changes locked knobs: that is the sandbox's.
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("1");
  await page.locator("[data-drill]").waitFor({ state: "hidden" });
  await page.locator(".panel.knobs").waitFor({ state: "visible" });
  if (new URL(page.url()).search.includes("drill=")) throw new Error(`still a drill link: ${page.url()}`);
  t.ok("a preset's digit key leaves the drill for the sandbox");

  await page.setViewportSize({ width: 390, height: 844 });
  await t.open("drill=claim-order");
  await page.locator("[data-drill]").waitFor({ state: "visible" });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) throw new Error(`phone: ${overflow}px of horizontal overflow`);
  await t.shot("drill-phone.png");
  await page.goto(`${process.env.E2E_URL}#tour/basics/2`, { waitUntil: "load" });
  await firstFrame(page);
  await t.shot("predict-phone.png");
  t.ok("phone 390x844: the drill and the prediction fit");
  t.noProblems("at the end");
});
