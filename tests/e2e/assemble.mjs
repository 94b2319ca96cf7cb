// "Write it yourself" (?assemble=1, issue 39 §3): the read path's blocks
// come shuffled; the learner orders them with the arrows (a keyboard does
// too) and picks how each is written; Run has the fleet run three storms,
// each graded pass or fail with what the learner's version did; then the
// assembly shows as code. A right assembly and two wrong ones are graded by
// their runs, and the right one is each example file, byte for byte.
// Screenshots at 1280x800 and 390x844.
import { readFileSync } from "node:fs";
import path from "node:path";
import { control, root, spec } from "./lib/harness.mjs";
import { FILES } from "./lib/examples.mjs";

// Independent of the page: the card's order of the blocks, and the files.
const CARD = ["get", "flight", "claim", "recheck", "origin", "release", "poll", "settle"];
const RIGHT = { flight: "claim-inside", claim: "claim-px", release: "release-token", poll: "poll-bounded", settle: "forget-failure" };

const order = (page) => page.locator("[data-assemble] li[data-block]").evaluateAll((ls) => ls.map((l) => l.dataset.block));

/// Puts the blocks in the card's order with the arrows, and picks `picks`
/// (block → variant id), the right variant elsewhere.
async function assemble(page, picks) {
  for (let guard = 0; guard < 100; guard++) {
    const now = await order(page);
    const at = now.findIndex((b, i) => i > 0 && CARD.indexOf(b) < CARD.indexOf(now[i - 1]));
    if (at < 0) break;
    await page.locator(`[data-block="${now[at]}"] button[data-act="up"]`).click();
  }
  const now = await order(page);
  if (now.join() !== CARD.join()) throw new Error(`the arrows did not put the blocks in order: ${now}`);
  for (const [block, right] of Object.entries(RIGHT)) {
    await page.locator(`[data-block="${block}"] button[data-pick="${picks[block] ?? right}"]`).click();
  }
}

async function run(page) {
  await page.locator(control("assemble-run")).click();
  await page.waitForFunction(() => document.querySelectorAll("[data-assemble] [data-grade]").length === 3, null, { timeout: 30_000 });
  return page.locator("[data-assemble] [data-grade]").evaluateAll((ls) =>
    Object.fromEntries(ls.map((l) => [l.dataset.storm, { grade: l.dataset.grade, said: l.querySelector(".assemble-said").textContent }])),
  );
}

await spec("assemble", async (t) => {
  const { page } = t;
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("assemble=1&seed=1");
  await page.waitForSelector("[data-assemble] li[data-block]", { timeout: 30_000 });
  const start = await order(page);
  if ([...start].sort().join() !== [...CARD].sort().join()) throw new Error(`the blocks: ${start}`);
  if (start.join() === CARD.join()) throw new Error("the blocks start in the card's order");
  t.ok(`${start.length} blocks, shuffled: ${start.join(", ")}`);

  // The keyboard: an arrow button moves its block, and the focus moves with it.
  const first = start[1];
  await page.locator(`[data-block="${first}"] button[data-act="up"]`).focus();
  await page.keyboard.press("Enter");
  await page.waitForFunction((b) => document.querySelector("[data-assemble] li[data-block]").dataset.block === b, first, { timeout: 5000 });
  const focused = await page.evaluate(() => document.activeElement?.closest("li[data-block]")?.dataset.block);
  if (focused !== first) throw new Error(`after Enter the focus is on ${focused}, not the moved block ${first}`);
  t.ok(`Enter on ${first}'s up arrow moved it first, and the focus went with it`);

  // A right assembly passes every storm.
  await assemble(page, {});
  let g = await run(page);
  for (const [storm, { grade, said }] of Object.entries(g)) {
    if (grade !== "pass") throw new Error(`the right assembly fails ${storm}: ${said}`);
  }
  if (!/^12 requests, 12 answered with a value; 1 origin call, 3 claim attempts\./.test(g.burst.said)) throw new Error(`burst: ${g.burst.said}`);
  t.ok(`the right assembly passes the 3 storms; burst: ${g.burst.said}`);
  await page.waitForTimeout(200);
  await t.shot("assemble-1280.png", { fullPage: false });

  // It shows as each example file, byte for byte.
  for (const [name, file] of Object.entries(FILES)) {
    await page.locator(`[data-assemble] button[data-language="${name}"]`).click();
    await page.waitForSelector(`[data-assemble-code][data-language="${name}"]`, { timeout: 5000 });
    const shown = await page.locator("[data-assemble-code]").textContent();
    const want = readFileSync(path.join(root, file), "utf8");
    if (shown !== want) {
      const at = [...want].findIndex((c, i) => shown[i] !== c);
      throw new Error(`${name}: the assembly differs from ${file} at character ${at}: ${JSON.stringify(shown.slice(at, at + 40))}`);
    }
    t.ok(`${name}: the right assembly is ${file}, ${Buffer.byteLength(want)} bytes, byte for byte`);
  }

  // A plain DEL: the holder storm fails, its run says whose claim it freed.
  await assemble(page, { release: "plain-del" });
  if ((await page.locator("[data-assemble] [data-grade]").count()) !== 0) throw new Error("grades of the old assembly stay after a change");
  g = await run(page);
  if (g.holder.grade !== "fail" || !g.holder.said.includes("deleted another office's claim")) throw new Error(`plain DEL, holder: ${JSON.stringify(g.holder)}`);
  if (g.burst.grade !== "pass") throw new Error(`plain DEL fails the burst: ${g.burst.said}`);
  const code = await page.locator("[data-assemble-code]").textContent();
  if (!code.includes("DEL lock:key, whoever holds it now")) throw new Error("the plain DEL's code is not in the listing");
  t.ok(`a plain DEL fails the holder storm: ${g.holder.said}`);

  // The link keeps the assembly: a reload shows the same blocks and picks.
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("[data-assemble] li[data-block]", { timeout: 30_000 });
  const again = await order(page);
  if (again.join() !== CARD.join()) throw new Error(`after a reload the blocks are ${again}`);
  const picked = await page.locator('[data-block="release"]').getAttribute("data-variant");
  if (picked !== "plain-del") throw new Error(`after a reload the release is ${picked}`);
  t.ok("a reload keeps the order and the plain DEL (the link carries the assembly)");

  // Failing closed: Redis down fails, with callers timed out.
  await assemble(page, { claim: "fail-closed" });
  g = await run(page);
  if (g["redis-down"].grade !== "fail" || !/\d+ timed out/.test(g["redis-down"].said) || /ended (error|timeout)/.test(g["redis-down"].said)) throw new Error(`fail closed, Redis down: ${JSON.stringify(g["redis-down"])}`);
  t.ok(`failing closed fails Redis down: ${g["redis-down"].said}`);

  // A projector: the blocks and the grades at 1280x720 and 1920x1080.
  for (const [w, h] of [[1280, 720], [1920, 1080]]) {
    await page.setViewportSize({ width: w, height: h });
    await page.locator("#assemble-title").evaluate((e) => e.scrollIntoView());
    await page.waitForTimeout(200);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > w) throw new Error(`at ${w}x${h} the page scrolls sideways: ${wide} px`);
    await t.shot(`assemble-${w}x${h}.png`);
  }
  t.ok("at 1280x720 and 1920x1080 the page does not scroll sideways");

  // A phone: nothing scrolls sideways but the code box.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator("[data-assemble]").scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: window.innerWidth }));
  if (widths.page > widths.view) throw new Error(`at 390 px the page scrolls sideways: ${JSON.stringify(widths)}`);
  await page.locator("#assemble-title").evaluate((e) => e.scrollIntoView());
  await t.shot("assemble-390.png");
  await page.locator("[data-assemble-code]").scrollIntoViewIfNeeded();
  await t.shot("assemble-390-code.png");
  t.ok(`at 390 px the page is ${widths.page} px wide`);

  // On your own: nothing of the answer on screen (the card, the code in
  // every language, the order's hint) until the learner has run theirs;
  // the mode survives a reload; then it all comes back.
  await page.setViewportSize({ width: 1280, height: 800 });
  await t.open("assemble=1&seed=1");
  await page.waitForSelector("[data-assemble] li[data-block]", { timeout: 30_000 });
  await page.locator('[data-assemble] button[data-act="mode"][data-own="true"]').click();
  const seen = () =>
    page.evaluate(() => {
      const shown = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
      const panel = document.querySelector("[data-code-panel]");
      return {
        card: shown(panel?.querySelector(".listing")),
        code: [...(panel?.querySelectorAll("pre.source, [data-write-it]") ?? [])].some(shown),
        said: shown(panel?.querySelector(".code-hidden")),
        order: shown(document.querySelector(".assemble-order")),
        assembled: shown(document.querySelector("[data-assemble-code]")),
        note: shown(document.querySelector("[data-code-hidden]")),
      };
    });
  let own = await seen();
  if (own.card || own.code || own.order || own.assembled || !own.said || !own.note) throw new Error(`on your own, before an answer: ${JSON.stringify(own)}`);
  await t.shot("assemble-own-1280.png", { fullPage: false });
  await page.reload();
  await page.waitForSelector("[data-assemble] li[data-block]", { timeout: 30_000 });
  own = await seen();
  if (own.card || own.order || !own.said) throw new Error(`on your own, after a reload: ${JSON.stringify(own)}`);
  t.ok("on your own: the card, the code and the order's hint hidden before an answer, and after a reload");
  await run(page);
  own = await seen();
  if (!(own.card || own.code) || !own.order || !own.assembled || own.said || own.note) throw new Error(`on your own, answered: ${JSON.stringify(own)}`);
  t.ok("on your own, once run: the card, the hint and the assembled code are back");
  t.noProblems("assemble");
});
