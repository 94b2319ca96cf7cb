// The interviewer's scoresheet (?kit=1, data-scoresheet): the candidate,
// the date, ticks, notes, a rating and a recommendation survive a reload
// (the timer too); printed to PDF (A4 and Letter) it is one page whose text
// carries the candidate's name and the ticks; it exports as Markdown; and a
// browser that refuses storage is told so.

import { readFileSync } from "node:fs";
import path from "node:path";
import { spec, baseUrl, shots } from "./lib/harness.mjs";
import { pdfText } from "./lib/pdf.mjs";

await spec("kit-scoresheet", async (t) => {
  const { page } = t;
  await page.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await page.locator("[data-scoresheet]").waitFor({ timeout: 30_000 });
  const name = "Ada Lovelace";
  await page.locator("[data-candidate]").fill(name);
  await page.locator("[data-date]").fill("2026-12-02");
  // The card's question, then question 11 asked as a follow-up: both are
  // on the sheet.
  const ticks = ["0/basics/1", "0/solid/0", "0/flag/2", "0/follow/0", "11/basics/0"];
  for (const id of ticks) {
    const q = id.split("/")[0];
    await page.locator(`.kit-pick[data-ask="${q}"]`).click();
    await page.locator(`[data-tick="${id}"]`).check();
  }
  const asked11 = (await page.locator('[data-kit-question="11"] .kit-question').textContent()).trim();
  await page.locator("#kit-notes").fill("Knew the fencing token.\nSlow on the jitter maths.");
  await page.locator('[data-rating="3"]').check();
  await page.locator("[data-recommendation]").selectOption("Hire");
  await page.locator("[data-timer-toggle]").click();
  await page.waitForFunction(() => document.querySelector("[data-timer]")?.textContent >= "0:02", null, { timeout: 10_000 });
  t.ok("the scoresheet is filled in: name, date, five ticks on two questions, notes, rating 3, Hire, the timer running");

  // A reload keeps it all, and the running timer has not lost its time.
  await page.reload({ waitUntil: "load" });
  await page.locator("[data-scoresheet]").waitFor({ timeout: 30_000 });
  const kept = await page.evaluate(() => ({
    name: document.querySelector("[data-candidate]").value,
    date: document.querySelector("[data-date]").value,
    ticks: [...document.querySelectorAll("[data-tick]")].filter((c) => c.checked).map((c) => c.dataset.tick),
    notes: document.querySelector("#kit-notes").value,
    rating: document.querySelector('[data-rating="3"]').checked,
    rec: document.querySelector("[data-recommendation]").value,
    timer: document.querySelector("[data-timer]").textContent,
    running: document.querySelector("[data-timer-toggle]").textContent,
  }));
  if (kept.name !== name || kept.date !== "2026-12-02" || kept.ticks.sort().join() !== [...ticks].sort().join() || !kept.notes.includes("fencing") || !kept.rating || kept.rec !== "Hire" || kept.running !== "Pause" || kept.timer < "0:02") {
    throw new Error(`after a reload: ${JSON.stringify(kept)}`);
  }
  t.ok(`a reload keeps the scoresheet and the running timer (${kept.timer})`);
  await page.locator("[data-timer-toggle]").click();

  // Printed: one page, A4 and Letter, its text the scoresheet's.
  for (const format of ["A4", "Letter"]) {
    const pdf = await page.pdf({ format, printBackground: false });
    const pages = pdfText(pdf);
    const count = (pdf.toString("latin1").match(/\/Type\s*\/Page\b/g) ?? []).length;
    if (count !== 1 || pages.length !== 1) throw new Error(`${format}: ${count} pages`);
    const text = pages[0];
    const flat = text.replace(/\s+/g, " ");
    for (const want of [name, "2026-12-02", "Overall rating: 3 of 4", "Recommendation: Hire", "Knew the fencing token.", "Red flags", "The card's question", "Question 11", asked11]) {
      if (!flat.includes(want)) throw new Error(`${format}: the printed text has no ${JSON.stringify(want)}:\n${text.slice(0, 3000)}`);
    }
    const marks = (flat.match(/\[x\]/g) ?? []).length;
    const empty = (flat.match(/\[ \]/g) ?? []).length;
    if (marks !== ticks.length || empty < 10) throw new Error(`${format}: ${marks} ticks and ${empty} blanks printed:\n${text.slice(0, 3000)}`);
    for (const hidden of ["Curveballs", "Print the scoresheet", "Pair with", "Question 12"]) {
      if (flat.includes(hidden)) throw new Error(`${format}: the printed page shows ${JSON.stringify(hidden)}`);
    }
    t.ok(`printed on ${format}: one page, its text names ${name}, the date, ${marks} ticks of ${marks + empty}, the rating and Hire`);
  }
  await page.emulateMedia({ media: "print" });
  await page.setViewportSize({ width: 794, height: 1123 });
  await page.screenshot({ path: path.join(shots, "kit-scoresheet-print.png"), fullPage: true });
  await page.emulateMedia({ media: "screen" });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Exported as Markdown.
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("[data-export]").click()]);
  const md = readFileSync(await download.path(), "utf8");
  if (download.suggestedFilename() !== "scoresheet-ada-lovelace-2026-12-02.md") throw new Error(`the file is ${download.suggestedFilename()}`);
  for (const want of [`- Candidate: ${name}`, "- Recommendation: Hire", "- Overall rating: 3 of 4", "Slow on the jitter maths.", "## Question 11", asked11]) {
    if (!md.includes(want)) throw new Error(`the Markdown has no ${JSON.stringify(want)}:\n${md}`);
  }
  const mdTicks = md.split("\n").filter((l) => l.startsWith("- [x]")).length;
  if (mdTicks !== ticks.length) throw new Error(`the Markdown has ${mdTicks} ticks:\n${md}`);
  t.ok(`exported as ${download.suggestedFilename()} with ${mdTicks} ticks`);
  await page.screenshot({ path: path.join(shots, "kit-scoresheet.png"), fullPage: true });

  // A browser that refuses storage: the kit says so.
  const blocked = await page.context().newPage();
  await blocked.addInitScript(() => {
    Object.defineProperty(window, "localStorage", {
      get() {
        throw new DOMException("denied", "SecurityError");
      },
    });
  });
  await blocked.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await blocked.locator("[data-scoresheet]").waitFor({ timeout: 30_000 });
  await blocked.locator("[data-candidate]").fill("Grace Hopper");
  await blocked.locator("[data-storage-off]").waitFor({ state: "visible", timeout: 5_000 });
  const says = (await blocked.locator("[data-storage-off]").textContent()).trim();
  if (!/keeps nothing/.test(says)) throw new Error(`the storage warning: ${says}`);
  t.ok(`without storage the kit says: ${says}`);
  await blocked.close();
  t.noProblems("the scoresheet");
});
