// End-to-end check of the walking skeleton: the built page loads from a
// sub-folder without a single console error, the controls drive the
// simulation, and the counters show what it measured. Screenshots at a laptop
// and a phone size land in tests/e2e/screenshots/ for a human to look at.
//
// Run through tests/e2e/run.sh (make e2e), which serves dist/ and sets E2E_URL.

import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
// playwright-core lives in the project-local tool folder that `make setup` fills.
const require = createRequire(path.join(root, ".tools", "resolve-from-here.js"));
const { chromium } = require("playwright-core");

const url = process.env.E2E_URL;
if (!url) {
  console.error("E2E_URL is not set: run this through tests/e2e/run.sh");
  process.exit(2);
}
const shots = path.join(here, "screenshots");
mkdirSync(shots, { recursive: true });

const problems = [];
let checks = 0;
function ok(name) {
  checks += 1;
  console.log(`ok ${checks} - ${name}`);
}

const userDataDir = mkdtempSync(path.join(tmpdir(), "stampede-e2e-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1280, height: 800 },
});

let failure = null;
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`uncaught exception: ${err.message}`));
  page.on("requestfailed", (req) =>
    problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`),
  );
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });

  const metric = (name) => `[data-metric="${name}"]`;
  const control = (name) => `[data-control="${name}"]`;
  async function expectMetric(name, want, why) {
    try {
      await page.waitForFunction(
        ([sel, want]) => document.querySelector(sel)?.textContent.trim() === want,
        [metric(name), want],
        { timeout: 15_000 },
      );
    } catch {
      const got = await page.locator(metric(name)).first().textContent().catch(() => null);
      throw new Error(`${name}: expected ${want} (${why}), page shows ${JSON.stringify(got)}`);
    }
    ok(`${name} = ${want}: ${why}`);
  }
  function expectNoProblems(when) {
    if (problems.length) throw new Error(`${when}:\n  ${problems.join("\n  ")}`);
  }
  async function setNumber(name, value) {
    const input = page.locator(control(name));
    await input.fill(String(value));
    await input.dispatchEvent("input");
    await input.dispatchEvent("change");
  }

  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector(metric("naive"), { timeout: 30_000 });
  await expectMetric("naive", "8000", "the interview card: 40 instances x 200 threads");
  await expectMetric("recomputes", "1", "both layers on by default");
  expectNoProblems("while loading the page");
  ok("the page loaded from a sub-folder with no console errors and no failed requests");

  for (const [theme, suffix] of [["light", ""], ["dark", "-dark"]]) {
    await page.emulateMedia({ colorScheme: theme });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(shots, `desktop-1280x800${suffix}.png`) });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(shots, `phone-390x844${suffix}.png`) });
    await page.screenshot({ path: path.join(shots, `phone-390x844-full${suffix}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 800 });
  ok("screenshots taken at 1280x800 and 390x844, light and dark");

  await setNumber("instances", 10);
  await expectMetric("naive", "2000", "10 instances x 200 threads");
  await page.selectOption(control("claim"), "off");
  await page.setChecked(control("singleflight"), false);
  await expectMetric("recomputes", "2000", "no defence: every thread recomputes");
  await page.setChecked(control("singleflight"), true);
  await expectMetric("recomputes", "10", "singleflight alone: one recompute per instance");
  await expectMetric("claim_attempts", "0", "the claim is off");
  await page.screenshot({ path: path.join(shots, "desktop-1280x800-singleflight-only.png") });

  await setNumber("instances", 5000);
  await expectMetric("naive", "200000", "5000 instances is clamped to the core's limit of 1000");
  const notice = (await page.locator(".notices").textContent({ timeout: 5_000 })) ?? "";
  if (!notice.includes("instances")) {
    throw new Error(`expected a notice about the clamped instances, got ${JSON.stringify(notice)}`);
  }
  ok("an out-of-range knob is clamped and the page says so");
  expectNoProblems("while driving the controls");
  ok("no console errors while driving the controls");
} catch (err) {
  failure = err;
} finally {
  await context.close().catch(() => {});
  rmSync(userDataDir, { recursive: true, force: true });
}

if (failure) {
  console.error(`not ok - skeleton: ${failure.message}`);
  if (problems.length) console.error(`browser problems:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`skeleton: ${checks} passed, 0 failed`);
