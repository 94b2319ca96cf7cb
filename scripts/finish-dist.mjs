// Finishes a release build in dist/ (run by `make dist` after trunk):
//
// 1. Minifies wasm-bindgen's loader with terser (trunk's own minifier cannot
//    parse it and ships it as is), and updates its integrity hash.
// 2. Joins the stylesheets into one file, in their order: one request
//    instead of four, and gzip finds more to share (1.6 KB gzipped less
//    than the four files compressed apart; BENCHMARKS.md).
// 3. Locks the page down with a Content-Security-Policy <meta>: only the
//    page's own files, WebAssembly compilation, and trunk's inline loader by
//    its sha256 hash. No other inline script, no inline style attribute, no
//    third-party request, no plugin, no <base>, no form target.
//
// Usage: node scripts/finish-dist.mjs dist
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const dist = process.argv[2] ?? "dist";
const require = createRequire(path.resolve(".tools", "package.json"));
const { minify } = require("terser");

const indexPath = path.join(dist, "index.html");
let html = readFileSync(indexPath, "utf8");

const fail = (why) => {
  console.error(`finish-dist: ${why}`);
  process.exit(1);
};

// 1. The loader.
const jsName = html.match(/from '\.\/([^']+\.js)'/)?.[1] ?? fail("no loader import in index.html");
const jsPath = path.join(dist, jsName);
const source = readFileSync(jsPath, "utf8");
const out = await minify(source, { module: true, compress: { passes: 2 }, mangle: true });
if (!out.code) fail(`terser returned nothing for ${jsName}`);
writeFileSync(jsPath, out.code);
const sri = (bytes, alg) => `${alg}-${createHash(alg).update(bytes).digest("base64")}`;
const linkRe = new RegExp(`(href=\\./${jsName.replace(/[.]/g, "\\.")} integrity=)(sha384-[A-Za-z0-9+/=]+)`);
if (!linkRe.test(html)) fail(`no integrity attribute for ${jsName}`);
html = html.replace(linkRe, `$1${sri(out.code, "sha384")}`);

// 2. One stylesheet. The same rules in the same order, so the cascade is
// unchanged; named like trunk's files (a hash of the content).
const cssLinks = [...html.matchAll(/<link href=\.\/([^ >]+\.css) integrity=sha384-[A-Za-z0-9+/=]+ rel=stylesheet>/g)];
if (cssLinks.length === 0) fail("no stylesheet links in index.html");
const css = cssLinks.map((m) => readFileSync(path.join(dist, m[1]), "utf8")).join("\n");
const cssName = `style-${createHash("sha256").update(css).digest("hex").slice(0, 16)}.css`;
writeFileSync(path.join(dist, cssName), css);
html = html.replace(cssLinks[0][0], `<link href=./${cssName} integrity=${sri(css, "sha384")} rel=stylesheet>`);
for (const m of cssLinks.slice(1)) html = html.replace(m[0], "");
for (const m of cssLinks) rmSync(path.join(dist, m[1]));

// 3. The policy. Every inline script must be the loader, hashed.
const inline = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].filter((m) => !/\bsrc=/.test(m[1]));
if (inline.length !== 1) fail(`expected exactly one inline script (trunk's loader), found ${inline.length}`);
const policy = [
  "default-src 'none'",
  `script-src 'self' 'wasm-unsafe-eval' '${sri(inline[0][2], "sha256")}'`,
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join("; ");
if (html.includes("Content-Security-Policy")) fail("index.html already has a policy");
const charset = "<meta charset=utf-8>";
if (!html.includes(charset)) fail("no <meta charset> to put the policy after");
html = html.replace(charset, `${charset}<meta http-equiv=Content-Security-Policy content="${policy}">`);
writeFileSync(indexPath, html);

console.log(
  `finish-dist: ${jsName} ${source.length} -> ${out.code.length} bytes; ${cssLinks.length} stylesheets joined into ${cssName}; Content-Security-Policy set (${policy.length} characters)`,
);
