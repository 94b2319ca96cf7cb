// The claim's clock on the canvas (issue 39, §2): under the Redis box the
// claim's TTL runs down against its holder's work, and a holder that died
// with its claim is drawn dead. What is drawn is also the canvas's
// `data-claim-clock` (docs/HOOKS.md), checked here against the page's
// clock and the caption's times (the timeline's own markers): the TTL left
// falls as the clock moves and the work grows by the same amount; a dead
// claim's TTL left is its expiry (from the caption) less now.
import { control, spec } from "./lib/harness.mjs";

const read = (page) =>
  page.evaluate(() => ({
    clock: document.querySelector(".stage .stage-canvas canvas")?.getAttribute("data-claim-clock") ?? null,
    now: Number(document.querySelector('[data-metric="now_ms"]')?.textContent),
    said: document.querySelector("[data-followed]")?.textContent.trim() ?? "",
  }));

const parse = (text) => {
  const m = /^holder=(\S+) (dead|alive) left=([\d.]+) ttl=([\d.]+) working=(\S+)$/.exec(text ?? "");
  return m && { holder: m[1], dead: m[2] === "dead", left: Number(m[3]), ttl: Number(m[4]), working: m[5] === "-" ? null : Number(m[5]) };
};

const near = (a, b) => Math.abs(a - b) <= 0.15;

await spec("claim-clock", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });

  // A burst: the holder's claim, step by step.
  await t.open("preset=burst&i=3&t=4&seed=1&speed=0.03");
  await page.locator(control("follow")).selectOption("holder");
  // Paused, so only the steps move the clock: playing, a loaded machine's
  // slow steps let the run reach its end before the claim was seen twice.
  if ((await page.locator(control("play")).getAttribute("aria-pressed")) === "true") await page.locator(control("play")).click();
  await page.waitForFunction(() => document.querySelector('[data-control="play"]')?.getAttribute("aria-pressed") === "false");
  // The holder is known once it wins: the next markers until then.
  for (let i = 0; i < 10 && !(await read(page)).said; i++) await t.nextEvent();
  if (!(await read(page)).said) throw new Error("no holder to follow");
  const seen = [];
  const log = [];
  let last = null;
  // Steps of the clock (a tenth of the run each) while it works.
  for (let i = 0; i < 12 && seen.length < 4; i++) {
    const before = await t.text("now_ms");
    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("ArrowRight");
    try {
      await page.waitForFunction((b) => document.querySelector('[data-metric="now_ms"]').textContent !== b, before, { timeout: 5000 });
    } catch {
      break;
    }
    await page.waitForTimeout(300);
    const r = await read(page);
    const c = parse(r.clock);
    log.push(`${r.now}: ${r.clock}`);
    if (r.clock === null) throw new Error("the canvas has no data-claim-clock");
    if (!c) {
      if (r.clock !== "free") throw new Error(`data-claim-clock reads ${JSON.stringify(r.clock)}`);
      last = null;
      continue;
    }
    if (c.dead) throw new Error(`a burst's holder drawn dead: ${r.clock}`);
    if (!(c.left > 0 && c.left <= c.ttl)) throw new Error(`TTL left out of range: ${r.clock}`);
    if (last && last.c.holder === c.holder) {
      const dt = r.now - last.now;
      if (!near(last.c.left - c.left, dt)) throw new Error(`the TTL left fell by ${last.c.left - c.left} ms over ${dt} ms: ${last.clock} -> ${r.clock}`);
      if (last.c.working !== null && c.working !== null && !near(c.working - last.c.working, dt)) throw new Error(`the work grew by ${c.working - last.c.working} ms over ${dt} ms`);
      seen.push(`${r.now} ms: ${c.left} of ${c.ttl} ms left, working ${c.working ?? "-"} ms`);
    } else {
      seen.push(`${r.now} ms: holder ${c.holder}, ${c.left} of ${c.ttl} ms left`);
    }
    last = { c, now: r.now, clock: r.clock };
  }
  if (seen.length < 2) throw new Error(`the claim was seen too little: ${log.join("; ")}`);
  t.ok(`the holder's claim runs down with the clock: ${seen.join("; ")}`);
  await page.locator(".stage").screenshot({ path: new URL("./screenshots/claim-clock-burst.png", import.meta.url).pathname });

  // A holder that died with its claim: drawn dead; its TTL left is the
  // caption's expiry less now, and keeps running down.
  await t.open("preset=holder-crash&at=7000");
  await page.locator(control("follow")).selectOption("holder");
  await page.waitForFunction(() => /crashed at/.test(document.querySelector("[data-followed]")?.textContent ?? ""), null, { timeout: 30_000 });
  await page.waitForTimeout(400);
  let r = await read(page);
  let c = parse(r.clock);
  const expiry = Number(/until its TTL runs out at ([\d.]+) ms/.exec(r.said)?.[1]);
  if (!c || !c.dead) throw new Error(`after the crash the claim is drawn ${JSON.stringify(r.clock)}, not dead (${r.said})`);
  if (!near(c.left, expiry - r.now)) throw new Error(`the dead claim has ${c.left} ms left at ${r.now} ms; the caption says it runs out at ${expiry} ms`);
  await page.locator(".stage").screenshot({ path: new URL("./screenshots/claim-clock-dead.png", import.meta.url).pathname });
  t.ok(`the dead holder's claim at ${r.now} ms: ${r.clock} (runs out at ${expiry} ms, as the caption says)`);
  await page.keyboard.press("n");
  await page.waitForFunction((b) => Number(document.querySelector('[data-metric="now_ms"]').textContent) !== b, r.now, { timeout: 5000 });
  await page.waitForTimeout(400);
  const r2 = await read(page);
  const c2 = parse(r2.clock);
  if (r2.now < expiry) {
    if (!c2?.dead || !near(c2.left, expiry - r2.now)) throw new Error(`at ${r2.now} ms the dead claim reads ${r2.clock}`);
  } else if (c2?.dead && c2.holder === c.holder) {
    throw new Error(`at ${r2.now} ms, past its expiry at ${expiry} ms, the dead claim is still drawn: ${r2.clock}`);
  }
  t.ok(`at ${r2.now} ms: ${r2.clock}`);
  t.noProblems("claim-clock");
});
