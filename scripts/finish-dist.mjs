// Finishes a release build in dist/ (run by `make dist` after trunk):
//
// 1. Minifies wasm-bindgen's glue with terser (trunk's own minifier cannot
//    parse it and ships it as is), preloads the glue and the wasm from
//    <head>, and writes the page's loader, which compiles the wasm from the
//    preloaded fetch while it streams.
// 2. Joins the stylesheets into one file, in their order: one request
//    instead of four, and gzip finds more to share (1.6 KB gzipped less
//    than the four files compressed apart; BENCHMARKS.md).
// 3. Locks the page down with a Content-Security-Policy <meta>: only the
//    page's own files, WebAssembly compilation, and the two inline scripts
//    (the loader, and the first screen's route) by their sha256 hashes.
//    No other inline script, no inline style attribute, no
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

const sri = (bytes, alg) => `${alg}-${createHash(alg).update(bytes).digest("base64")}`;

// 1. The loader.
const jsName = html.match(/from '\.\/([^']+\.js)'/)?.[1] ?? fail("no loader import in index.html");
const wasmName = html.match(/module_or_path: '\.\/([^']+\.wasm)'/)?.[1] ?? fail("the loader names no wasm");
const sizes = [];
{
  const source = readFileSync(path.join(dist, jsName), "utf8");
  const out = await minify(source, { module: true, compress: { passes: 2 }, mangle: true });
  if (!out.code) fail(`terser returned nothing for ${jsName}`);
  writeFileSync(path.join(dist, jsName), out.code);
  sizes.push(`${jsName} ${source.length} -> ${out.code.length} bytes`);
}
// Trunk's preload links carry the integrity of the glue before terser; the
// page's own fetch both at once from <head>, before the body is parsed, and
// the loader takes the wasm from that fetch, compiling while it streams.
html = html.replace(/<link[^>]*rel=(modulepreload|preload)[^>]*>/g, "");
const preload =
  `<link rel=modulepreload href=./${jsName}>` +
  `<link rel=preload href=./${wasmName} as=fetch type=application/wasm crossorigin>`;
if (!html.includes("</title>")) fail("no <title> to put the preloads after");
html = html.replace("</title>", `</title>${preload}`);
const loaderRe = /<script type=module>[\s\S]*?<\/script>/;
if (!loaderRe.test(html)) fail("no inline loader in index.html");
const loader = [
  `const wasmFetch=fetch('./${wasmName}',{credentials:'same-origin',mode:'cors'});`,
  `const bindings=await import('./${jsName}');`,
  "const wasm=await bindings.default({module_or_path:wasmFetch});",
  "window.wasmBindings=bindings;",
  "dispatchEvent(new CustomEvent('TrunkApplicationStarted',{detail:{wasm}}));",
].join("\n");
html = html.replace(loaderRe, () => `<script type=module>${loader}</script>`);
// The first screen (index.html) is the tour's first step. An address that
// opens anything else shows a calm line instead, decided before the body is
// parsed so the step never flashes (style/main.css, `html.linked`).
const route =
  "var q=location.search.replace(/^\\?/,'').split('&').filter(function(p){return p&&!/^(embed|present)=/.test(p)});" +
  "if(q.length||!/^(#tour(\\/basics(\\/1)?)?)?$/.test(location.hash))document.documentElement.classList.add('linked')";
html = html.replace("</title>", `</title><script>${route}</script>`);

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

// 2b. The real-systems table's page (real-systems.html, copied by trunk;
// a first visit does not load it): the joined stylesheet and the hashed
// favicon in place of its source's, and a policy of its own (no script).
const realPath = path.join(dist, "real-systems.html");
let real = readFileSync(realPath, "utf8");
const icon = html.match(/<link href=\.\/(favicon-[0-9a-f]+\.svg)/)?.[1] ?? fail("no hashed favicon in index.html");
const realCss = /<link rel="stylesheet" href="style\/main\.css" \/>/;
if (!realCss.test(real)) fail("real-systems.html does not link style/main.css");
real = real.replace(realCss, `<link href=./${cssName} integrity=${sri(css, "sha384")} rel=stylesheet>`);
real = real.replace('<link rel="icon" href="assets/favicon.svg" />', `<link href=./${icon} rel=icon>`);
if (!real.includes(`href=./${icon}`)) fail("real-systems.html names no favicon");
const realPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'";
real = real.replace('<meta charset="utf-8" />', `<meta charset="utf-8" /><meta http-equiv=Content-Security-Policy content="${realPolicy}">`);
if (!real.includes("Content-Security-Policy")) fail("real-systems.html has no <meta charset> for its policy");
if (/<script/i.test(real)) fail("real-systems.html has a script");
writeFileSync(realPath, real);
// The stylesheets' sources and the favicon's, copied for that page in a dev
// build, are joined and hashed now.
rmSync(path.join(dist, "style"), { recursive: true, force: true });
rmSync(path.join(dist, "assets"), { recursive: true, force: true });

// 3. The policy. Every inline script must be the loader or the first
// screen's route, each admitted by its hash.
const inline = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].filter((m) => !/\bsrc=/.test(m[1]));
if (inline.length !== 2) fail(`expected exactly two inline scripts (the route and the loader), found ${inline.length}`);
const policy = [
  "default-src 'none'",
  `script-src 'self' 'wasm-unsafe-eval' ${inline.map((m) => `'${sri(m[2], "sha256")}'`).join(" ")}`,
  "style-src 'self'",
  "img-src 'self'",
  // The room's relay (crates/stampede-relay), wherever the link's
  // ?relay=ws://… or wss://… names it: the page opens no socket without one.
  "connect-src 'self' ws: wss:",
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
  `finish-dist: ${sizes.join(", ")}; ${cssLinks.length} stylesheets joined into ${cssName}; Content-Security-Policy set (${policy.length} characters)`,
);
