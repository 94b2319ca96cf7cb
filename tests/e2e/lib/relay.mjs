// The room's relay for the relay-*.mjs specs: starts the real relay binary
// (target/debug/stampede-relay, built by `make e2e`) on a free loopback
// port, and a second browser whose contexts are separate profiles (a
// candidate's machine, each phone in the room).

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import path from "node:path";
import { root } from "./harness.mjs";

const require = createRequire(path.join(root, ".tools", "resolve-from-here.js"));
const { chromium } = require("playwright-core");

const binary = path.join(root, "target", "debug", "stampede-relay");

/// Starts the relay; resolves with its ws:// address and a stop().
export async function startRelay(args = []) {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run 'cargo build -p stampede-relay' (make e2e does)`);
  const child = spawn(binary, ["--host", "127.0.0.1", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const at = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`the relay exited (${code}): ${out}`)));
  });
  return {
    url: `ws://${at}`,
    stop: () => child.kill("SIGTERM"),
  };
}

/// A second browser: each newContext() is a profile of its own.
export async function otherBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/// A raw WebSocket client of the relay, for what no page would send (a
/// flood, a second kit's forged command): a browser WebSocket in a blank
/// page of `context` (Node 20 has no WebSocket of its own).
export async function rawClient(context, url) {
  const page = await context.newPage();
  await page.evaluate((u) => {
    window.inbox = [];
    window.ws = new WebSocket(u.endsWith("/relay") ? u : `${u}/relay`);
    window.ws.onmessage = (e) => window.inbox.push(JSON.parse(e.data));
    window.opened = new Promise((r) => (window.ws.onopen = r));
  }, url);
  return {
    page,
    async send(obj) {
      await page.evaluate(async (m) => {
        await window.opened;
        window.ws.send(m);
      }, typeof obj === "string" ? obj : JSON.stringify(obj));
    },
    /// Waits for a message matching `want` (a function's source over m).
    async until(want, what = "a message") {
      try {
        const h = await page.waitForFunction((w) => window.inbox.find(new Function("m", `return ${w};`)), want, { timeout: 45_000 });
        return h.jsonValue();
      } catch {
        throw new Error(`no ${what} (${want}) from the relay; had ${JSON.stringify(await page.evaluate(() => window.inbox)).slice(0, 600)}`);
      }
    },
    inbox: () => page.evaluate(() => window.inbox),
    close: () => page.close(),
  };
}

/// Collects a page's console errors and exceptions into `problems`.
export function watch(page, who, problems) {
  page.on("console", (m) => m.type() === "error" && problems.push(`${who} console error: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`${who} exception: ${e.message}`));
}

/// A TCP proxy in front of the relay (for relay-reconnect.mjs): the pages
/// speak to the relay through it, and cut() drops every connection and
/// refuses new ones (as a lost network does) until mend(); the relay
/// itself, and its rooms, live on.
export async function startProxy(relayUrl) {
  const net = await import("node:net");
  const [host, port] = relayUrl.replace(/^ws:\/\//, "").replace(/\/.*$/, "").split(":");
  const open = new Set();
  let refusing = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (refusing) return client.destroy();
    accepted += 1;
    const upstream = net.connect(Number(port), host);
    open.add(client);
    open.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    accepted: () => accepted,
    cut() {
      refusing = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    mend() {
      refusing = false;
    },
    stop: () => server.close(),
  };
}
