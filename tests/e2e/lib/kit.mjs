// Shared by the kit's specs: opens the interviewer's kit in a second window
// of the spec's browser and pairs it with the candidate's window `page` by
// the code that window shows. Returns the kit's page and the code.
import { baseUrl } from "./harness.mjs";

export async function pairKit(t, page = t.page) {
  const kit = await page.context().newPage();
  kit.on("console", (m) => m.type() === "error" && t.problems.push(`kit console error: ${m.text()}`));
  kit.on("pageerror", (e) => t.problems.push(`kit exception: ${e.message}`));
  await kit.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await kit.locator("[data-kit]").waitFor({ timeout: 30_000 });
  await page.locator(".pair-badge:not([hidden])").waitFor({ timeout: 10_000 });
  const code = await page.locator(".pair-badge").getAttribute("data-pair-code");
  await kit.locator(`[data-pair-with="${code}"]`).click();
  await kit.locator('[data-pair-alive="1"]').waitFor({ timeout: 10_000 });
  return { kit, code };
}

/// The question the kit asks is on the paired window's screen (issue 40:
/// it never was): the card's question once paired, then question `n` as
/// the kit picks it, worded as the kit words it, with none of the kit's
/// levels, red flags or follow-ups (the answer and the scoring); the kit
/// says which question the window shows (data-candidate-sees). `others`
/// are windows that must show no question. Puts the card's question back.
/// Waits on the pages' state, never a fixed time.
export async function askedOnScreen(t, kit, candidate, { n = 3, others = [], timeout = 45_000 } = {}) {
  const band = (q) => `[data-candidate-question="${q}"]`;
  const sees = async (q) => {
    await candidate.locator(band(q)).waitFor({ state: "visible", timeout });
    await kit.locator(`[data-candidate-sees="${q}"]`).waitFor({ timeout });
  };
  await sees(0);
  await kit.locator(`.kit-pick[data-ask="${n}"]`).click();
  await sees(n);
  const on = (await candidate.locator(band(n)).innerText()).trim();
  const asks = (await kit.locator(`[data-kit-question="${n}"] .kit-question`).textContent()).trim();
  if (!on.includes(asks)) throw new Error(`question ${n}: the window shows ${JSON.stringify(on)}, the kit asks ${JSON.stringify(asks)}`);
  const secret = await kit.locator(`[data-kit-question="${n}"]`).evaluate((q) =>
    [...q.querySelectorAll(".kit-gist, [data-point], [data-red-flag] label, .kit-why, .kit-listen")].map((e) => e.textContent.trim()).filter((w) => w.length > 12),
  );
  if (secret.length < 3) throw new Error(`question ${n}: only ${secret.length} of the kit's answer words to look for`);
  const leaked = secret.filter((w) => on.includes(w));
  if (leaked.length) throw new Error(`the candidate's window shows the kit's answer words: ${JSON.stringify(leaked)}`);
  const seen = (await candidate.locator(band(n)).boundingBox()) ?? { height: 0 };
  if (!(seen.height > 20)) throw new Error(`question ${n} on the window is ${seen.height}px tall`);
  for (const o of others) {
    if (await o.locator("[data-candidate-question]").count()) throw new Error("a window the kit is not paired with shows the question");
  }
  await kit.locator('.kit-pick[data-ask="0"]').click();
  await sees(0);
  t.ok(`the paired window shows the question the kit asks (the card's, then ${n}: "${asks.slice(0, 60)}…"), not the kit's ${secret.length} lines of answers and scoring`);
}
