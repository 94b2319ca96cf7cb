// Writes the room pack: the release build in dist/ as one HTML file in
// dist-single/index.html, for a room whose Wi-Fi fails. Opened from file://
// it needs no server: the wasm-bindgen loader, the wasm (base64) and the
// styles are inlined, the favicon is a data: URL, and the page keeps a
// Content-Security-Policy, rewritten for a file with nothing to fetch: the one
// inline script and each inline style by its sha256 hash, WebAssembly
// compilation, images only from data: URLs, and no connection anywhere.
//
// Usage: node scripts/dist-single.mjs [dist] [dist-single]   (make dist-single)
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const dist = process.argv[2] ?? "dist";
const outDir = process.argv[3] ?? "dist-single";

const fail = (why) => {
  console.error(`dist-single: ${why}`);
  process.exit(1);
};
const read = (name, enc) => {
  try {
    return readFileSync(path.join(dist, name), enc);
  } catch {
    return fail(`${path.join(dist, name)} is missing: run 'make dist' first`);
  }
};
const sha256 = (text) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

let html = read("index.html", "utf8");

// The loader (scripts/finish-dist.mjs) names the glue and the wasm; both
// are inlined here.
const loaderRe = /<script type=module>([\s\S]*?)<\/script>/;
// The first screen's route (finish-dist.mjs), kept as it is: by its hash.
const route = html.match(/<script>([^<]*)<\/script>/)?.[1] ?? fail("no first-screen route in index.html");
const loader = html.match(loaderRe)?.[1] ?? fail("no inline loader in index.html");
const jsName = loader.match(/import\('\.\/([^']+\.js)'\)/)?.[1] ?? fail("the loader imports no glue");
const wasmName = loader.match(/fetch\('\.\/([^']+\.wasm)'/)?.[1] ?? fail("the loader fetches no wasm");

// The glue is an ES module ending in one export list (terser's output, see
// finish-dist.mjs); inlined, its exports become a plain object.
let glue = read(jsName, "utf8");
const exportRe = /export\s*\{([^}]*)\};?\s*$/;
const exported = glue.match(exportRe)?.[1] ?? fail(`${jsName} does not end in one export list`);
const pairs = exported.split(",").map((e) => {
  const [local, name = local] = e.trim().split(/\s+as\s+/);
  return `${JSON.stringify(name)}:${local}`;
});
if (!pairs.some((p) => p.startsWith('"default":'))) fail(`${jsName} exports no default (init)`);
glue = glue.replace(exportRe, "");
// Declarations exported in place (`export class IntoUnderlyingSink`,
// `export function crash_for_testing`) lose the keyword and join the object.
glue = glue.replace(/\bexport\s+(class|function|const|let|var)\s+([A-Za-z_$][\w$]*)/g, (_, kind, name) => {
  pairs.push(`${JSON.stringify(name)}:${name}`);
  return `${kind} ${name}`;
});
glue += `\nconst __bindings={${pairs.join(",")}};`;
if (/\bimport\s*[{*'"]|\bexport\s/.test(glue)) fail(`${jsName} has another import or export; cannot inline it`);

const wasm = read(wasmName).toString("base64");
const script = [
  glue,
  `const __wasm=Uint8Array.from(atob("${wasm}"),c=>c.charCodeAt(0));`,
  `const wasm=await __bindings.default({module_or_path:__wasm});`,
  `window.wasmBindings=__bindings;`,
  `dispatchEvent(new CustomEvent("TrunkApplicationStarted",{detail:{wasm}}));`,
].join("\n");
html = html.replace(loaderRe, () => `<script type=module>${script}</script>`);

// The real-systems table is a page of its own in dist/ (a first visit does
// not load it); the room pack has no network to open it with, so the table
// is back in the one file, in place of the section that links it.
const realPage = read("real-systems.html", "utf8");
const realSection = realPage.match(/<section class="panel reference" id="real-systems"[\s\S]*?<\/section>/)?.[0] ?? fail("real-systems.html has no section");
const stubRe = /<section class="panel reference"[^>]*\bid=(?:"real-systems"|real-systems\b)[^>]*>[\s\S]*?<\/section>/;
if (!stubRe.test(html)) fail("index.html has no real-systems section to fill");
html = html.replace(stubRe, () => realSection);

// The preloads of the glue and the wasm: inlined now, nothing to fetch.
html = html.replace(/<link[^>]*rel=(modulepreload|preload)[^>]*>/g, "");

// Styles, in their order.
const styles = [];
html = html.replace(/<link href=\.\/([^ >]+\.css)[^>]*rel=stylesheet>/g, (_, name) => {
  const css = read(name, "utf8");
  styles.push(css);
  return `<style>${css}</style>`;
});
if (styles.length === 0) fail("no stylesheet in index.html");

// The favicon.
html = html.replace(/<link href=\.\/([^ >]+\.svg)[^>]*rel=icon>/, (_, name) => {
  const svg = read(name).toString("base64");
  return `<link href="data:image/svg+xml;base64,${svg}" rel=icon>`;
});

const left = html.match(/(?:href|src)=["']?\.\/[^ >"']+/g);
if (left) fail(`index.html still refers to files: ${left.join(", ")}`);

const policy = [
  "default-src 'none'",
  `script-src 'wasm-unsafe-eval' ${sha256(script)} ${sha256(route)}`,
  `style-src ${styles.map(sha256).join(" ")}`,
  "img-src data:",
  // A relay the link names (?relay=ws://…); none is opened without one.
  "connect-src ws: wss:",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join("; ");
const policyRe = /<meta http-equiv=Content-Security-Policy content="[^"]*">/;
if (!policyRe.test(html)) fail("index.html has no policy to rewrite (run finish-dist.mjs first)");
html = html.replace(policyRe, () => `<meta http-equiv=Content-Security-Policy content="${policy}">`);

mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, "index.html"), html);
console.log(`dist-single: ${path.join(outDir, "index.html")} (${html.length} bytes, ${styles.length} styles inlined)`);
