// The room pack: dist-single/index.html (make dist-single) opened from
// file://, with no server, runs the interview card to its numbers (8000 with
// no defence, 40 claim attempts, 1 recompute) under its own policy: the
// harness fails on any console error, failed request or CSP violation. A link
// followed inside the file keeps working (the share link of another preset).

import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { spec, root } from "./lib/harness.mjs";

const file = path.join(root, "dist-single", "index.html");
if (!existsSync(file)) throw new Error(`${file} is missing: run 'make dist-single' first`);
const url = pathToFileURL(file).href;

await spec("single", async (t) => {
  const { page } = t;
  const open = async (query) => {
    await page.goto(`${url}?${query}`, { waitUntil: "load" });
    await page.waitForFunction(() => document.documentElement.dataset.firstFrame, null, { timeout: 30_000 });
  };
  await open("seed=1");
  if (!page.url().startsWith("file://")) throw new Error(`not a file:// page: ${page.url()}`);
  const requests = [];
  page.on("request", (r) => {
    if (!r.url().startsWith("data:")) requests.push(r.url());
  });
  await t.expectMetric("naive", "8000", "40 instances x 200 threads, from a file");
  await page.keyboard.press("End");
  await t.expectMetric("claim_attempts", "40", "the claim inside singleflight");
  await t.expectMetric("recomputes", "1", "both layers: one recompute");
  await open("preset=claim-outer");
  await page.keyboard.press("End");
  await t.expectMetric("claim_attempts", "8000", "claim outside: every thread claims");
  const others = requests.filter((u) => !u.startsWith(url.split("?")[0]));
  if (others.length) throw new Error(`the file fetched something: ${others.join(", ")}`);
  t.ok("nothing fetched but the file itself");
  await t.shot("single-file.png");
  t.noProblems("opening the single file");
});
