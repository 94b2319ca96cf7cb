// Shared by the print specs: the text of a PDF that Chromium printed.
import { inflateSync } from "node:zlib";

/// The text a PDF shows, page by page, read from its content streams
/// through each font's ToUnicode map (what Chromium's PDFs carry): enough
/// to find words, not a layout. Each text object is a line.
export function pdfText(bytes) {
  const raw = bytes.toString("latin1");
  const objects = new Map();
  for (const m of raw.matchAll(/(\d+) 0 obj\b([\s\S]*?)endobj/g)) {
    const body = m[2];
    const s = /stream\r?\n/.exec(body);
    let data = null;
    if (s) {
      const start = m.index + m[0].indexOf(body) + s.index + s[0].length;
      const end = raw.indexOf("endstream", start);
      let buf = bytes.subarray(start, end);
      if (/\/FlateDecode/.test(body.slice(0, s.index))) {
        try {
          buf = inflateSync(buf);
        } catch {
          buf = Buffer.alloc(0);
        }
      }
      data = buf.toString("latin1");
    }
    objects.set(Number(m[1]), { dict: s ? body.slice(0, s.index) : body, data });
  }
  const hexCodes = (hex, width) => {
    const out = [];
    for (let i = 0; i + width <= hex.length; i += width) out.push(parseInt(hex.slice(i, i + width), 16));
    return out;
  };
  const utf16 = (hex) => String.fromCharCode(...hexCodes(hex, 4));
  // Font object -> (code -> text), and the code width.
  const cmaps = new Map();
  for (const [n, o] of objects) {
    const to = /\/ToUnicode (\d+) 0 R/.exec(o.dict);
    if (!/\/Type\s*\/Font/.test(o.dict) || !to) continue;
    const cmap = objects.get(Number(to[1]))?.data ?? "";
    const map = new Map();
    let width = 4;
    const range = /<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>/.exec(cmap.split("begincodespacerange")[1] ?? "");
    if (range) width = range[1].length;
    for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
      for (const p of block[1].matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>/g)) map.set(parseInt(p[1], 16), utf16(p[2]));
    }
    for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
      for (const p of block[1].matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(<[0-9a-fA-F]+>|\[[^\]]*\])/g)) {
        const [lo, hi] = [parseInt(p[1], 16), parseInt(p[2], 16)];
        if (p[3].startsWith("[")) {
          [...p[3].matchAll(/<([0-9a-fA-F]+)>/g)].forEach((d, i) => map.set(lo + i, utf16(d[1])));
        } else {
          const base = p[3].slice(1, -1);
          for (let c = lo; c <= hi; c++) {
            const last = parseInt(base.slice(-4), 16) + (c - lo);
            map.set(c, utf16(base.slice(0, -4)) + String.fromCharCode(last));
          }
        }
      }
    }
    cmaps.set(n, { map, width });
  }
  // Resource names (/F4) -> font objects, wherever the resources are.
  const fonts = new Map();
  for (const o of objects.values()) {
    for (const d of o.dict.matchAll(/\/Font\s*<<([^>]*)>>/g)) {
      for (const f of d[1].matchAll(/\/([^\s/]+)\s+(\d+) 0 R/g)) fonts.set(f[1], Number(f[2]));
    }
  }
  const pages = [];
  const pageObjects = [...objects.values()].filter((o) => /\/Type\s*\/Page\b/.test(o.dict));
  for (const p of pageObjects) {
    const refs = /\/Contents\s*(\[[^\]]*\]|\d+ 0 R)/.exec(p.dict);
    const ids = refs ? [...refs[1].matchAll(/(\d+) 0 R/g)].map((r) => Number(r[1])) : [];
    let text = "";
    let font = null;
    for (const id of ids) {
      const content = objects.get(id)?.data ?? "";
      for (const tok of content.matchAll(/\/([^\s/\[\]<>()]+)\s+[\d.]+\s+Tf|(\[(?:[^\]\\]|\\.)*\])\s*TJ|(<[0-9a-fA-F]*>|\((?:[^)\\]|\\.)*\))\s*Tj|\bET\b/g)) {
        if (tok[1]) {
          font = cmaps.get(fonts.get(tok[1]));
          continue;
        }
        if (tok[0] === "ET") {
          text += "\n";
          continue;
        }
        const parts = tok[2] ? [...tok[2].matchAll(/<([0-9a-fA-F]*)>|\(((?:[^)\\]|\\.)*)\)/g)] : [[tok[3], tok[3].startsWith("<") ? tok[3].slice(1, -1) : undefined, tok[3].startsWith("(") ? tok[3].slice(1, -1) : undefined]];
        for (const part of parts) {
          if (part[1] !== undefined && font) text += hexCodes(part[1], font.width).map((c) => font.map.get(c) ?? "").join("");
          else if (part[2] !== undefined) text += part[2].replace(/\\(.)/g, "$1");
        }
      }
    }
    // Ligatures (ﬂ, ﬁ) read as their letters.
    pages.push(text.normalize("NFKC"));
  }
  return pages;
}

/// The number of pages of a PDF.
export const pageCount = (pdf) => (pdf.toString("latin1").match(/\/Type\s*\/Page\b/g) ?? []).length;
