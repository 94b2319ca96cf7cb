// The room votes from their phones through the real relay: presenter mode
// shows a QR code and a short link (data-vote-link) while a step asks; 20
// phones, each a browser context of its own (390x844), open it and vote
// (data-vote-option); the projector's tally (data-vote-tally) follows live,
// one vote per phone (a phone that changes its mind or reloads still
// counts once), and the phones' votes join the hands counted by key. A
// phone that floods the relay is cut off and the rest of the room is not.

import path from "node:path";
import { spec, baseUrl, shots } from "./lib/harness.mjs";
import { startRelay, otherBrowser, rawClient, watch } from "./lib/relay.mjs";

const PHONES = 20;
const relay = await startRelay();
const browser = await otherBrowser();
try {
  await spec("relay-vote", async (t) => {
    const { page } = t;
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto(`${baseUrl}?relay=${encodeURIComponent(relay.url)}#tour/basics/1`, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
    await page.locator("[data-predict-option]").first().waitFor({ state: "visible", timeout: 30_000 });
    await page.locator("body").click({ position: { x: 2, y: 2 } });
    await page.keyboard.press("p");
    await page.waitForFunction(() => document.body.classList.contains("presenter"));
    await page.locator("[data-vote-link]").waitFor({ state: "visible", timeout: 20_000 });
    const link = await page.locator("[data-vote-link]").getAttribute("data-vote-link");
    if (!/[?]vote=[A-HJ-KMNP-Z2-9]{13}&relay=/.test(link)) throw new Error(`vote link ${link}`);
    if ((await page.locator(".room-vote-qr svg path").count()) !== 1) throw new Error("no QR code beside the vote");
    t.ok(`presenter mode's vote shows a QR code and the link ${link}`);

    // Twenty phones, each its own profile, vote 8 A, 6 B, 4 C, 2 D.
    const want = [8, 6, 4, 2];
    const picks = want.flatMap((n, i) => Array(n).fill(i));
    const phones = [];
    for (let i = 0; i < PHONES; i++) {
      const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const p = await ctx.newPage();
      watch(p, `phone ${i}`, t.problems);
      await p.goto(link, { waitUntil: "load" });
      await p.locator("[data-vote-option]").nth(3).waitFor({ timeout: 30_000 });
      phones.push({ ctx, p });
    }
    for (const [i, { p }] of phones.entries()) {
      const letter = "ABCD"[picks[i]];
      await p.locator(`[data-vote-option="${picks[i]}"]`).tap();
      await p.locator(`[data-vote-mine="${letter}"]`).waitFor({ timeout: 20_000 });
    }
    await page.locator(`[data-vote-tally="${want.join(",")}"]`).waitFor({ timeout: 20_000 });
    const words = (await page.locator("[data-vote-tally]").textContent()).trim();
    if (!words.startsWith(`${PHONES} phones in the room, ${PHONES} voted`)) throw new Error(`tally: ${words}`);
    const onOptions = await page.locator("[data-votes]").evaluateAll((es) => es.map((e) => e.dataset.votes));
    if (onOptions.join(",") !== want.join(",")) throw new Error(`the options show ${onOptions}`);
    const labels = await phones[0].p.locator("[data-vote-option]").allTextContents();
    if (labels.some((l) => l.trim().length < 3)) throw new Error(`the phone's options have no words: ${labels}`);
    t.ok(`${PHONES} phones vote; the projector's tally follows live: "${words}", on the options too`);
    await page.screenshot({ path: path.join(shots, "relay-vote-1280x720.png") });
    await phones[0].p.screenshot({ path: path.join(shots, "relay-phone-390x844.png") });

    // One vote per phone: a change of mind moves it; a reload keeps it.
    await phones[0].p.locator('[data-vote-option="3"]').tap();
    await page.locator('[data-vote-tally="7,6,4,3"]').waitFor({ timeout: 20_000 });
    await phones[1].p.reload({ waitUntil: "load" });
    await phones[1].p.locator('[data-vote-mine="A"]').waitFor({ timeout: 30_000 });
    await phones[1].p.locator('[data-vote-option="1"]').tap();
    await page.locator('[data-vote-tally="6,7,4,3"]').waitFor({ timeout: 20_000 });
    t.ok("a phone that changes its mind, or reloads and votes again, still counts once (6,7,4,3)");

    // A flood from one phone: refused, and the room votes on.
    const flooder = await rawClient(phones[2].ctx, relay.url);
    const room = new URL(link).searchParams.get("vote");
    await flooder.send({ t: "join", room, token: null });
    await flooder.until('m.t === "joined"', "a seat");
    await flooder.page.evaluate(async () => {
      await window.opened;
      for (let i = 0; i < 500; i++) window.ws.send(JSON.stringify({ t: "vote", option: i % 4 }));
    });
    const limited = await flooder.until('m.t === "error" && m.code === "rate-limited"', "rate limit");
    await phones[3].p.locator('[data-vote-option="2"]').tap();
    await phones[3].p.locator('[data-vote-mine="C"]').waitFor({ timeout: 20_000 });
    await page.waitForFunction(() => {
      const c = document.querySelector("[data-vote-tally]").dataset.voteTally.split(",").map(Number);
      return c.reduce((a, b) => a + b, 0) === 21 && c[2] >= 5;
    }, null, { timeout: 20_000 });
    t.ok(`a phone flooding 500 votes is cut ("${limited.message.slice(0, 60)}…") and counts once; the others still vote`);

    // Hands by key join the phones.
    const before = await page.locator('[data-predict-option="0"] [data-votes]').getAttribute("data-votes");
    await page.keyboard.press("a");
    await page.waitForFunction((b) => document.querySelector('[data-predict-option="0"] [data-votes]').dataset.votes === String(Number(b) + 1), before, { timeout: 10_000 });
    t.ok(`a hand counted by key joins the phones' votes on A (${before} → ${Number(before) + 1})`);
    // The code is big enough to scan from a room (>= 200 px at 1280x720,
    // more on a bigger projector), beside the question and its options
    // (overlapping none of them) and above the fleet.
    const sizes = [];
    for (const [w, h] of [[1280, 720], [1920, 1080]]) {
      await page.setViewportSize({ width: w, height: h });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const box = await page.evaluate(() => {
        const r = (e) => e.getBoundingClientRect();
        const qr = r(document.querySelector(".room-vote-qr"));
        const hits = [".tour-question", "[data-predict-option]", "[data-vote-tally]", "[data-vote-link]"].flatMap((sel) =>
          [...document.querySelectorAll(sel)].filter((e) => {
            const b = r(e);
            return b.width > 0 && b.left < qr.right && b.right > qr.left && b.top < qr.bottom && b.bottom > qr.top;
          }).map(() => sel),
        );
        const fleet = document.querySelector("canvas, [data-fleet]");
        return { size: Math.min(qr.width, qr.height), bottom: qr.bottom, fleetTop: fleet ? r(fleet).top : Infinity, hits };
      });
      if (box.size < 200) throw new Error(`at ${w}x${h} the QR code is ${box.size} px, too small to scan from a room`);
      if (box.hits.length) throw new Error(`at ${w}x${h} the QR code covers ${box.hits.join(", ")}`);
      if (box.bottom > box.fleetTop) throw new Error(`at ${w}x${h} the QR code reaches into the fleet (${box.bottom} > ${box.fleetTop})`);
      sizes.push(`${Math.round(box.size)} px at ${w}x${h}`);
      await page.screenshot({ path: path.join(shots, `relay-vote-${w}x${h}.png`) });
    }
    if (!(parseInt(sizes[1]) > parseInt(sizes[0]))) throw new Error(`the QR code does not grow with the projector: ${sizes}`);
    t.ok(`the QR code is ${sizes.join(", ")}, beside the question and above the fleet`);
    for (const { ctx } of phones) await ctx.close();
    t.noProblems("relay vote");
  });
} finally {
  await browser.close().catch(() => {});
  relay.stop();
}
