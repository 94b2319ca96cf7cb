// The lessons, measured in the built page: instances x threads with no
// defence, instances with singleflight, one with the claim; the claim's
// order changes the claim attempts; every preset loads and runs; with a
// knob changed, the lesson's sentence is the CLI's for the same link; a
// pitfall that cannot bite offers where it does; a shared link restores
// the same numbers.

import { execFileSync } from "node:child_process";
import path from "node:path";
import { spec, control, metric, root } from "./lib/harness.mjs";

const cli = path.join(root, "target", "debug", "stampede-sim");
const simAt = (query) => JSON.parse(execFileSync(cli, ["--url", query, "--json"], { encoding: "utf8" }));

// The sentence under the proof is, word for word, stampede-sim's for the
// page's own link; returns the link and the CLI's lesson.
async function saysTheClisSentence(t) {
  const { page } = t;
  const link = await page.evaluate(() => location.search);
  const want = simAt(link).lesson;
  try {
    await page.waitForFunction((w) => document.querySelector("[data-lesson]")?.textContent.trim() === w, want.sentence, { timeout: 20_000 });
  } catch {
    throw new Error(`${link}: the page says "${await page.locator("[data-lesson]").textContent()}", stampede-sim says "${want.sentence}"`);
  }
  return { link, want };
}

await spec("lessons", async (t) => {
  const { page } = t;

  await t.open();
  await t.expectMetric("naive", "8000", "the interview card: 40 instances x 200 threads");
  t.noProblems("while loading the page");
  t.ok("the release build loads from a sub-folder with no console errors and no failed requests");
  const pressed = await page.locator(control("play")).getAttribute("aria-pressed");
  if (pressed !== "true") throw new Error(`the page should autoplay; play has aria-pressed=${pressed}`);
  t.ok("the page autoplays");
  await t.untilEnd();
  await t.expectMetric("recomputes", "1", "both layers: one recompute for the fleet");
  await t.expectMetric("claim_attempts", "40", "claim inside singleflight: one attempt per instance");
  await t.expectMetric("measured_none", "8000", "the comparison run with no defence");
  await t.expectMetric("measured_singleflight", "40", "the comparison run with singleflight only");
  await t.expectMetric("measured_both", "1", "the comparison run with both layers");
  const listing = (await page.locator(".listing").textContent()) ?? "";
  for (const want of ["40 attempts · 1 won", "1 started · 1 done", "8000 answers"]) {
    if (!listing.includes(want)) throw new Error(`the read path should count "${want}": ${listing}`);
  }
  t.ok("the read path's lines count what the fleet ran (40 claim attempts, 1 recompute, 8000 answers)");

  // The defences, one at a time, on a smaller fleet at full speed.
  await t.open("i=10&speed=100");
  await page.selectOption(control("claim"), "off");
  await page.setChecked(control("singleflight"), false);
  await t.expectMetric("naive", "2000", "10 x 200");
  await t.untilEnd();
  await t.expectMetric("recomputes", "2000", "no defence: instances x threads");
  await page.setChecked(control("singleflight"), true);
  await t.untilEnd();
  await t.expectMetric("recomputes", "10", "singleflight: one per instance");
  await t.expectMetric("claim_attempts", "0", "no claim yet");
  await page.selectOption(control("claim"), "inner");
  await t.untilEnd();
  await t.expectMetric("recomputes", "1", "the claim: one for the fleet");
  await t.expectMetric("claim_attempts", "10", "claim inside singleflight: instances");
  await page.selectOption(control("claim"), "outer");
  await t.untilEnd();
  await t.expectMetric("claim_attempts", "2000", "claim outside singleflight: instances x threads");
  await t.expectMetric("recomputes", "1", "still one recompute");
  await t.shot("desktop-claim-outer.png");
  t.noProblems("while switching the defences");

  // Every preset loads and runs.
  const presets = await page.$$eval(`${control("preset")} option`, (os) =>
    os.map((o) => o.value).filter((v) => v !== "custom" && v !== "changed"),
  );
  if (presets.length < 13) throw new Error(`expected 13 presets, found ${presets.length}`);
  for (const name of presets) {
    await t.open(`preset=${name}&speed=100`);
    const chosen = await page.locator(control("preset")).inputValue();
    if (chosen !== name) throw new Error(`preset=${name} shows ${chosen} in the picker`);
    await page.waitForFunction(
      (sel) => Number(document.querySelector(sel)?.textContent) > 0,
      metric("requests"),
      { timeout: 30_000 },
    );
    const lesson = (await page.locator(".lesson").textContent()) ?? "";
    if (lesson.length < 20) throw new Error(`preset ${name} shows no lesson`);
    t.noProblems(`while running preset ${name}`);
    t.ok(`preset ${name} loads, names its lesson and runs`);
  }
  // Turning a knob that a lesson asks for says what changed, and the proof
  // under it takes the lesson of what is now running.
  await t.open("preset=failure&speed=100");
  await page.setChecked(control("lesson-pitfall-remember-failure"), true);
  await page.waitForFunction((sel) => document.querySelector(sel)?.value === "changed", control("preset"));
  const kept = (await page.locator(".lesson").textContent()) ?? "";
  if (!kept.startsWith("Changed from “A failing origin”: pitfalls remember-failure.")) {
    throw new Error(`the picker's words after a knob: "${kept}"`);
  }
  const label = await page.$eval(`${control("preset")} option[value=changed]`, (o) => o.textContent);
  if (!label.includes("your changes")) throw new Error(`the picker says "${label}"`);
  await page.waitForFunction(() => document.querySelector("[data-lesson]")?.dataset.lessonName === "remember-failure");
  t.ok(`a turned knob: the picker says "${label}" and what changed; the proof's lesson is remember-failure's`);

  // Every preset with one knob changed that changes its lesson: at the end of
  // the run the sentence under the proof is, word for word, the one
  // stampede-sim gives for the page's own link.
  const changed = {
    burst: "sf=0", naive: "sp=5000", singleflight: "i=10", "claim-outer": "sf=0", stale: "l=wait",
    failure: "pf=remember-failure", hang: "pf=no-deadline", "holder-crash": "ct=1000", "short-ttl": "ct=5000",
    "redis-down": "re=closed", cold: "adm=0", jitter: "j=0", swr: "rd=1", xfetch: "xfetch_beta=0",
    "late-writer": "fw=1", cheap: "c=inner", "redis-hang": "rto=30", "hot-key": "l1=100", "cold-skew": "sf=0&c=off", "retry-storm": "sf=1", "open-loop": "arr=closed",
  };
  for (const name of presets) {
    if (!changed[name]) throw new Error(`preset ${name} has no changed knob in this test`);
    await t.open(`preset=${name}&${changed[name]}&speed=100`);
    await t.untilEnd(120_000);
    const { link, want } = await saysTheClisSentence(t);
    const proofMetric = await page.locator("[data-proof]").getAttribute("data-metric");
    if (proofMetric !== want.metric) throw new Error(`${link}: the proof shows ${proofMetric}, the lesson is ${want.metric}`);
    t.ok(`${link}: "${want.sentence.slice(0, 70)}…" as stampede-sim says`);
  }
  t.noProblems("while changing each preset's knob");

  // The claims issue's examples: each said something false for its own run
  // (the words after the link); the page now says the CLI's sentence, made
  // of claims the run proves, and never those words.
  const examples = [
    ["rd=1&ro=hang&rto=300&seed=1", "acts in time"],
    ["i=4&t=20&w=steady&c=off&vt=2000&nt=500&oo=3000&dur=12000&th=200&seed=1", "left the map, so later requests tried again"],
    ["i=8&t=30&sf=0&c=off&fr=0.6&rt=2&rbo=20&seed=3", "each retry was an origin call of its own"],
    ["c=off&st=60000&swr=1&seed=1", "the claim guarded"],
    ["i=10&t=100&k=5000&w=cold&adm=50&seed=1", "instead of swamping"],
    ["i=10&t=20&w=steady&ct=10000&vt=5000&hc=1&pf=no-deadline&dur=20000&th=200&seed=1", "nothing hung"],
    ["rd=1&f=holder@50&seed=1", "The claim holder dies at 50 ms:"],
  ];
  for (const [query, never] of examples) {
    await t.open(`${query}&speed=100`);
    await t.untilEnd(180_000);
    const { link, want } = await saysTheClisSentence(t);
    if (want.sentence.includes(never)) throw new Error(`${link}: still says "${never}": ${want.sentence}`);
    t.ok(`${link}: "${want.sentence.slice(0, 90)}…", not "${never}"`);
  }

  // A pitfall that cannot bite says what it needs, and one click shows it.
  await t.open("pf=no-deadline&speed=100");
  await t.untilEnd();
  const needs = page.locator("[data-needs]");
  await needs.waitFor({ state: "visible", timeout: 10_000 });
  const said = (await needs.textContent()) ?? "";
  if (!said.includes("cannot bite here") || !said.includes("hung origin")) throw new Error(`data-needs says "${said}"`);
  await needs.locator("button").click();
  await page.waitForFunction(() => location.search.includes("hang=1"));
  await t.untilEnd();
  await page.waitForFunction(() => document.querySelector("[data-lesson]")?.dataset.lessonName === "no-deadline");
  if ((await t.number("pinned")) <= 0 && Number((await page.locator("[data-proof]").textContent()).replace(/,/g, "")) <= 0) {
    throw new Error("the offered scenario pins nothing");
  }
  if (await needs.count()) throw new Error("data-needs stays where the pitfall bites");
  t.ok(`no deadline with nothing hanging says "${said.trim().slice(0, 60)}…"; its button opens a hung origin, which pins threads`);

  // A scenario far from every preset is custom: it names no lesson and shows
  // no lesson knobs, not even their empty box.
  await t.open("i=12&t=50&sf=0&claim=off&rtt=9&rc=77&dl=900&keys=3&seed=1");
  const custom = await page.evaluate(() => {
    const k = document.querySelector(".lesson-knobs");
    return [document.querySelector('[data-control="preset"]').value, k.hidden, k.childElementCount, !!document.querySelector("[role=alert]")];
  });
  if (custom[0] !== "custom" || !custom[1] || custom[2] !== 0 || custom[3]) {
    throw new Error(`a custom scenario: picker ${custom[0]}, lesson knobs hidden ${custom[1]}, ${custom[2]} of them, banner ${custom[3]}`);
  }
  t.ok("a custom scenario: the picker says custom, and no empty box of lesson knobs");

  // Picking a preset from the picker switches the scenario.
  await t.open("speed=100");
  await page.selectOption(control("preset"), "naive");
  await t.expectMetric("claim_attempts", "0", "the naive preset has no claim");
  if (!(await page.evaluate(() => location.search.includes("sf=0")))) {
    throw new Error(`the URL does not follow the preset: ${await page.evaluate(() => location.search)}`);
  }
  t.ok("picking a preset updates the URL");

  // A shared link restores the same scenario, seed and numbers.
  await t.open("i=8&t=50&c=outer&l=stale&st=60000&seed=42&speed=50");
  await t.untilEnd();
  const read = () =>
    page.$$eval("[data-metric]", (els) =>
      Object.fromEntries(els.map((e) => [e.dataset.metric, e.textContent.trim()])),
    );
  const first = await read();
  const shared = await page.evaluate(() => location.href);
  if (!shared.includes("seed=42") || !shared.includes("i=8")) {
    throw new Error(`the address bar does not hold the scenario: ${shared}`);
  }
  await page.goto("about:blank");
  await page.goto(shared, { waitUntil: "load" });
  await t.untilEnd();
  const second = await read();
  for (const [k, v] of Object.entries(first)) {
    if (second[k] !== v) throw new Error(`shared link: ${k} was ${v}, now ${second[k]}`);
  }
  t.ok(`a shared link restores the same ${Object.keys(first).length} numbers (${shared.split("?")[1]})`);
  t.noProblems("while sharing a link");
});
