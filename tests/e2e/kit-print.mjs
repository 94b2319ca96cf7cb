// Issue 40, defect 6: the kit's print, as Chromium prints it to PDF on A4
// and Letter.
// 1. The card's question and any one more fit one page (on Letter card +
//    one question took 2 pages, the verdict alone on page 2).
// 2. A long interview (the card and five questions) over several pages:
//    no page ends on a heading ("Question 12" was stranded at a page's
//    foot), and every page carries the candidate's name, the date and its
//    number ("Page 2 of 3"; later pages carried neither).
// No console errors.
import { spec, baseUrl } from "./lib/harness.mjs";
import { pdfText, pageCount } from "./lib/pdf.mjs";

const NAME = "Ada Lovelace";
const DATE = "2026-12-02";
const HEADING = /^(Question \d+|The card's question|Red flags: saying one costs the question|Follow-ups, in order|Notes|Verdict|Basics|Solid|Deeper)$/;

async function fresh(page, asked) {
  await page.evaluate(() => localStorage.clear());
  await page.reload({ waitUntil: "load" });
  await page.locator("[data-scoresheet]").waitFor({ timeout: 30_000 });
  await page.locator("[data-candidate]").fill(NAME);
  await page.locator("[data-date]").fill(DATE);
  for (const q of asked) await page.locator(`.kit-pick[data-ask="${q}"]`).click();
}

await spec("kit-print", async (t) => {
  const { page } = t;
  await page.goto(`${baseUrl}?kit=1`, { waitUntil: "load" });
  await page.locator("[data-scoresheet]").waitFor({ timeout: 30_000 });
  for (let q = 1; q <= 15; q++) {
    await fresh(page, [q]);
    for (const format of ["A4", "Letter"]) {
      const pdf = await page.pdf({ format });
      const n = pageCount(pdf);
      if (n !== 1) {
        const last = pdfText(pdf)[n - 1].replace(/\s+/g, " ").slice(0, 100);
        throw new Error(`${format}: the card and question ${q} take ${n} pages; page ${n} reads ${JSON.stringify(last)}`);
      }
    }
  }
  t.ok("the card's question and any one of the 15 more print on one page, A4 and Letter");

  const asked = [1, 4, 8, 12, 15];
  await fresh(page, asked);
  for (const format of ["A4", "Letter"]) {
    const pdf = await page.pdf({ format });
    const pages = pdfText(pdf);
    if (pages.length < 2) throw new Error(`${format}: the card and ${asked.length} questions on ${pages.length} page`);
    pages.forEach((text, i) => {
      const flat = text.replace(/\s+/g, " ");
      const foot = `Page ${i + 1} of ${pages.length}`;
      for (const want of [NAME, DATE, foot]) {
        if (!flat.includes(want)) throw new Error(`${format}: page ${i + 1} of ${pages.length} does not carry ${JSON.stringify(want)}: …${flat.slice(-200)}`);
      }
      if (i === pages.length - 1) return;
      const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !l.includes(foot) && !l.includes(NAME));
      const last = lines[lines.length - 1] ?? "";
      if (HEADING.test(last)) throw new Error(`${format}: page ${i + 1} ends on the heading ${JSON.stringify(last)}`);
      // Nor on a question's heading and its words, with none of its levels.
      const before = lines[lines.length - 2] ?? "";
      if (/^(Question \d+|The card's question)$/.test(before)) throw new Error(`${format}: page ${i + 1} ends on ${JSON.stringify(before)} and its question, its levels over the page`);
    });
    t.ok(`${format}: the card and questions ${asked.join(", ")} on ${pages.length} pages, each with ${NAME}, ${DATE} and "Page k of ${pages.length}", none ending on a heading`);
  }
  t.noProblems("the kit's print");
});
