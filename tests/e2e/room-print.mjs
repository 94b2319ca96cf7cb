// Printing, to PDF with Chromium's page.pdf(), from the sandbox and from
// presenter mode (present=1): the printed summary carries the scenario's
// link, as a QR code of it and as its text, and fits one page (the summary
// printed on its own is a PDF of one page; in the whole print the questions
// follow from the next page); presenter mode does not print blank.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { spec, shots } from "./lib/harness.mjs";

/// Pages of a PDF: its `/Type /Page` objects, not the `/Type /Pages` tree.
const pages = (pdf) => (pdf.toString("latin1").match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;

await spec("room-print", async (t) => {
  const { page } = t;
  for (const [what, query] of [
    ["the sandbox", "preset=burst&seed=3"],
    ["presenter mode", "preset=burst&seed=3&present=1"],
  ]) {
    await t.open(query);
    if (query.includes("present=1")) {
      await page.waitForFunction(() => document.body.classList.contains("presenter"));
    }
    await page.waitForFunction(() => document.querySelector(".qr-print [data-qr] svg path") && document.querySelector(".qr-print [data-qr]").dataset.qr === location.href.replace(/([?&])present=1(&|(?=#)|$)/, (m, a, b) => (b === "&" ? a : "")).replace(/\?(?=#|$)/, ""), null, { timeout: 10_000 });
    // The room's link: the page's own without presenter mode.
    const link = page.url().replace(/([?&])present=1(&|(?=#)|$)/, (m, a, b) => (b === "&" ? a : "")).replace(/\?(?=#|$)/, "");
    await page.emulateMedia({ media: "print" });
    const summary = page.locator("#summary");
    if (!(await summary.isVisible())) throw new Error(`${what}: the printed page has no summary`);
    const box = await summary.boundingBox();
    if (!box || box.height < 200) throw new Error(`${what}: the printed summary is ${JSON.stringify(box)}`);
    if (!(await page.locator(".qr-print [data-qr] svg").isVisible())) throw new Error(`${what}: the printed summary has no QR code`);
    const text = await page.evaluate(() => getComputedStyle(document.querySelector(".qr-print [data-qr]"), "::after").content);
    if (text !== JSON.stringify(link)) throw new Error(`${what}: the printed link reads ${text}, the page is at ${link}`);
    t.ok(`${what}: the printed summary shows the link's QR code and its text (${link})`);
    const name = what === "the sandbox" ? "sandbox" : "presenter";
    await t.shot(`print-${name}.png`, { fullPage: true });

    const whole = await page.pdf({ format: "A4", printBackground: false });
    writeFileSync(path.join(shots, `print-${name}.pdf`), whole);
    const n = pages(whole);
    if (n < 2) throw new Error(`${what}: the print is ${n} page(s); the questions should follow the summary`);
    // The summary alone: everything else hidden, and its page break (the
    // questions start on a page of their own) off, through the CSSOM (the
    // page's CSP allows no injected style sheet).
    await page.evaluate(() => {
      const summary = document.querySelector("#summary");
      for (let e = summary; e && e !== document.documentElement; e = e.parentElement) {
        for (const s of e.parentElement.children) {
          if (s !== e && s.tagName !== "SCRIPT") s.style.setProperty("display", "none", "important");
        }
      }
      summary.style.setProperty("break-after", "auto");
    });
    const alone = await page.pdf({ format: "A4", printBackground: false });
    const m = pages(alone);
    if (m !== 1) throw new Error(`${what}: the summary prints on ${m} pages`);
    for (const size of ["Letter"]) {
      const k = pages(await page.pdf({ format: size, printBackground: false }));
      if (k !== 1) throw new Error(`${what}: on ${size} the summary prints on ${k} pages`);
    }
    t.ok(`${what}: the print is ${n} A4 pages, the summary one page of them (A4 and Letter)`);
    await page.emulateMedia({ media: "screen" });
  }
  t.noProblems("printing");
});
